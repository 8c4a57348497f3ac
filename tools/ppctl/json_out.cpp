// SPDX-License-Identifier: GPL-2.0
#include "json_out.h"

#include <ostream>

#include <nlohmann/json.hpp>

namespace ppctl {

using nlohmann::json;

PrettyJsonBuf::~PrettyJsonBuf()
{
	finish();
}

void PrettyJsonBuf::finish()
{
	if (pending_.empty())
		return;
	to_ << pending_ << '\n';
	pending_.clear();
	to_.flush();
}

void PrettyJsonBuf::line(std::string_view l)
{
	json j = json::parse(l, nullptr, false);
	if (j.is_discarded()) {
		to_ << l << '\n';
		return;
	}
	to_ << j.dump(kPrettyIndent, ' ', false, json::error_handler_t::replace) << '\n';
}

PrettyJsonBuf::int_type PrettyJsonBuf::overflow(int_type c)
{
	if (traits_type::eq_int_type(c, traits_type::eof()))
		return traits_type::not_eof(c);
	char ch = traits_type::to_char_type(c);
	xsputn(&ch, 1);
	return c;
}

std::streamsize PrettyJsonBuf::xsputn(const char *s, std::streamsize n)
{
	std::string_view in(s, static_cast<std::size_t>(n));
	for (std::size_t nl; (nl = in.find('\n')) != std::string_view::npos;) {
		if (pending_.empty()) {
			line(in.substr(0, nl));
		} else {
			pending_.append(in.substr(0, nl));
			line(pending_);
			pending_.clear();
		}
		in.remove_prefix(nl + 1);
	}
	pending_.append(in);
	return n;
}

int PrettyJsonBuf::sync()
{
	to_.flush();
	return to_ ? 0 : -1;
}

std::string error_doc(const std::string &message, int sys_errno, const std::string &extack,
		      bool pretty)
{
	json j = {{"error", message},
		  {"errno", sys_errno ? json(sys_errno) : json(nullptr)},
		  {"extack", extack.empty() ? json(nullptr) : json(extack)}};
	return j.dump(pretty ? kPrettyIndent : -1, ' ', false, json::error_handler_t::replace) +
	       "\n";
}

}  // namespace ppctl
