// Helpers for tests that read rendered text.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace text {

// The lines of @s, without their newlines.
inline std::vector<std::string> lines(const std::string &s)
{
	std::vector<std::string> v;
	std::istringstream in(s);
	for (std::string l; std::getline(in, l);)
		v.push_back(l);
	return v;
}

}  // namespace text
