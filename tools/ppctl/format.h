// SPDX-License-Identifier: GPL-2.0
// ppctl: numbers for people.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ppctl {

// 999, 1.0K, 12K, 1.2M, 340G ... (powers of 1000, at most 4 characters).
std::string human_count(std::uint64_t v);
// 512B, 4.0K, 16K, 1.5M ... (powers of 1024, like ls -h).
std::string human_bytes(std::uint64_t v);
// A count as is (--raw) or humanised.
std::string count(std::uint64_t v, bool raw);
std::string count(std::optional<std::uint64_t> v, bool raw);	// "-" if none
// A per-second value: humanised, or with one decimal (--raw); "-" if none.
std::string per_second(std::optional<double> v, bool raw);
// A rate in [0, 1] as "97.3%"; "-" if none.
std::string percent(std::optional<double> r);
// Seconds as "12.3s", "5m12s", "3h05m", "2d04h".
std::string duration(double seconds);

// Columns of the terminal on @fd (TIOCGWINSZ), else $COLUMNS, else 80.
int terminal_width(int fd);

// A width no table reaches: nothing is left out.
inline constexpr int kNoWidthLimit = 1 << 30;

// How tables and numbers are laid out.  On a terminal (@tty), as wide as it
// is (@tty_width) and humanised unless --raw; elsewhere (a pipe, a file),
// every column whatever its width, and exact numbers unless --human: what a
// script or a log reads is never cut nor rounded.
struct Layout {
	int width;
	bool raw;
};
Layout layout_for(bool tty, int tty_width, bool raw, bool human);
// ... for file descriptor @fd.
Layout layout_of(int fd, bool raw, bool human);

}  // namespace ppctl
