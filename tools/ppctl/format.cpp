// SPDX-License-Identifier: GPL-2.0
#include "format.h"

#include <cmath>
#include <cstdlib>

#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/format.h>

namespace ppctl {

namespace {

std::string scaled(std::uint64_t v, double base, const char *const *units, int nunits,
		   const char *unit0)
{
	double x = static_cast<double>(v);
	int u = 0;
	while (x >= base - 0.5 && u < nunits - 1) {
		x /= base;
		u++;
	}
	if (u == 0)
		return fmt::format("{}{}", v, unit0);
	if (x < 9.95)
		return fmt::format("{:.1f}{}", x, units[u]);
	return fmt::format("{:.0f}{}", x, units[u]);
}

}  // namespace

std::string human_count(std::uint64_t v)
{
	static const char *const units[] = {"", "K", "M", "G", "T", "P", "E"};
	return scaled(v, 1000, units, 7, "");
}

std::string human_bytes(std::uint64_t v)
{
	static const char *const units[] = {"B", "K", "M", "G", "T", "P", "E"};
	return scaled(v, 1024, units, 7, "B");
}

std::string count(std::uint64_t v, bool raw)
{
	return raw ? std::to_string(v) : human_count(v);
}

std::string count(std::optional<std::uint64_t> v, bool raw)
{
	return v ? count(*v, raw) : "-";
}

std::string per_second(std::optional<double> v, bool raw)
{
	if (!v)
		return "-";
	if (raw)
		return fmt::format("{:.1f}", *v);
	return human_count(static_cast<std::uint64_t>(std::llround(*v)));
}

std::string percent(std::optional<double> r)
{
	if (!r)
		return "-";
	return fmt::format("{:.1f}%", *r * 100.0);
}

std::string duration(double s)
{
	if (s < 60)
		return fmt::format("{:.1f}s", s);
	auto t = static_cast<std::uint64_t>(s);
	if (t < 3600)
		return fmt::format("{}m{:02}s", t / 60, t % 60);
	if (t < 86400)
		return fmt::format("{}h{:02}m", t / 3600, t % 3600 / 60);
	return fmt::format("{}d{:02}h", t / 86400, t % 86400 / 3600);
}

int terminal_width(int fd)
{
	winsize ws{};
	if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (const char *c = std::getenv("COLUMNS")) {
		char *end = nullptr;
		long n = std::strtol(c, &end, 10);
		if (end != c && *end == '\0' && n > 0 && n < 10000)
			return static_cast<int>(n);
	}
	return 80;
}

Layout layout_for(bool tty, int tty_width, bool raw, bool human)
{
	if (tty)
		return {tty_width, raw};
	return {kNoWidthLimit, raw || !human};
}

Layout layout_of(int fd, bool raw, bool human)
{
	bool tty = isatty(fd);
	return layout_for(tty, tty ? terminal_width(fd) : 0, raw, human);
}

}  // namespace ppctl
