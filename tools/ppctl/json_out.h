// SPDX-License-Identifier: GPL-2.0
// ppctl: JSON on stdout as bpftool and ip write it: -p pretty-prints each
// document, and under --json an error is a document too.
#pragma once

#include <iosfwd>
#include <streambuf>
#include <string>
#include <string_view>

namespace ppctl {

// Spaces per level of -p, as bpftool's and ip's json_writer indent.
inline constexpr int kPrettyIndent = 4;

// A stream buffer that re-indents the one-line documents written through it
// (one per line, as every command writes them) and passes them on to @to.
// A line that is no JSON document passes as it is.  sync() (a flush of the
// stream) flushes @to, so streaming commands stay live.
class PrettyJsonBuf : public std::streambuf {
public:
	explicit PrettyJsonBuf(std::ostream &to) : to_(to) {}
	~PrettyJsonBuf() override;
	PrettyJsonBuf(const PrettyJsonBuf &) = delete;
	PrettyJsonBuf &operator=(const PrettyJsonBuf &) = delete;

	// Writes out a document left unfinished (a command that failed half
	// way), as it is and ended by a newline, so what follows starts a line.
	void finish();

protected:
	int_type overflow(int_type c) override;
	std::streamsize xsputn(const char *s, std::streamsize n) override;
	int sync() override;

private:
	void line(std::string_view l);

	std::ostream &to_;
	std::string pending_;
};

// An error as bpftool reports it under -j: {"errno": N, "error": MESSAGE,
// "extack": S}, errno and extack null when there are none; one line, or
// indented with @pretty.
std::string error_doc(const std::string &message, int sys_errno, const std::string &extack,
		      bool pretty);

}  // namespace ppctl
