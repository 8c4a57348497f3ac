// Helpers for tests that read rendered text.
#pragma once

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// The keys of JSON object @j.
inline std::set<std::string> keys(const nlohmann::json &j)
{
	std::set<std::string> k;
	for (const auto &[key, v] : j.items())
		k.insert(key);
	return k;
}

}  // namespace text
