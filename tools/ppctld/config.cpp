// SPDX-License-Identifier: GPL-2.0
#include "config.h"

#include <cmath>
#include <ostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "history.h"
#include "ppkit/daemon.h"

namespace ppctld {

namespace {

CLI::Validator duration_check(const char *what, double min, double max)
{
	return CLI::Validator(
		[=](std::string &s) -> std::string {
			auto v = ppkit::parse_duration(s);
			if (!v || *v < min || *v > max)
				return "bad " + std::string(what) + " '" + s +
				       "': expected a duration like 90, 1.5s, 10m or 1h, from " +
				       CLI::detail::to_string(min) + "s to " +
				       CLI::detail::to_string(max) + "s";
			return {};
		},
		"", "");
}

// --listen: "none", or ADDR:PORT (ADDR an IPv4 address or a host name, or
// [IPv6]), PORT 1..65535; what civetweb's listening_ports takes.
CLI::Validator listen_check()
{
	return CLI::Validator(
		[](std::string &s) -> std::string {
			const std::string bad = "bad listen address '" + s.substr(0, 64) +
						(s.size() > 64 ? "...'" : "'") +
						": expected ADDR:PORT (127.0.0.1:9105, [::1]:9105) or none";
			if (s == "none")
				return {};
			const auto colon = s.rfind(':');
			if (colon == std::string::npos || colon == 0 || colon + 1 == s.size() ||
			    s.size() - colon - 1 > 5)
				return bad;
			const std::string addr = s.substr(0, colon), port = s.substr(colon + 1);
			if (port.find_first_not_of("0123456789") != std::string::npos)
				return bad;
			const unsigned long p = std::stoul(port);
			if (p < 1 || p > 65535)
				return bad;
			const bool v6 = addr.front() == '[' && addr.back() == ']' && addr.size() > 2 &&
					addr.find_first_not_of("0123456789abcdefABCDEF:.", 1) == addr.size() - 1;
			const bool name = addr.size() <= 253 &&
					  addr.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
								 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") ==
						  std::string::npos;
			return v6 || name ? std::string() : bad;
		},
		"", "");
}

// @ms as parse_duration() reads it, in the largest unit that is exact.
std::string duration_text(long long ms)
{
	if (ms % 86'400'000 == 0)
		return fmt::format("{}d", ms / 86'400'000);
	if (ms % 3'600'000 == 0)
		return fmt::format("{}h", ms / 3'600'000);
	if (ms % 60'000 == 0)
		return fmt::format("{}m", ms / 60'000);
	if (ms % 1000 == 0)
		return fmt::format("{}s", ms / 1000);
	return fmt::format("{}ms", ms);
}

}  // namespace

std::size_t Config::history_points() const
{
	// Less a hair, so that 144m at 0.1s is 86,400 points, not 86,401.
	double n = std::ceil(history_s / interval_s - 1e-6);
	return n < 1 ? 1 : static_cast<std::size_t>(n);
}

Parsed parse(int argc, const char *const *argv, std::ostream &out, std::ostream &err)
{
	Config c;
	CLI::App app{"ppctld: samples every page pool, keeps their history, serves Prometheus "
		     "metrics and the JSON API that `ppctl history` and `ppctl top` use.",
		     "ppctld"};
	app.get_formatter()->column_width(34);
	app.set_version_flag("--version", PPKIT_VERSION);
	app.footer("Settings come from the configuration file (key = value, the long option "
		   "names) and the command line; a flag wins.\nSIGHUP reads both again; "
		   "SIGTERM and SIGINT stop the daemon.  See Documentation/ppctld.rst.");
	app.allow_config_extras(CLI::config_extras_mode::error);
	auto *cfg = app.set_config("-c,--config", kDefaultConfig,
				   "configuration file (read if it exists)", false);
	cfg->type_name("FILE");

	std::string interval = "1s", history = "1h";
	app.add_option("-i,--interval", interval, "sampling period (default 1s)")
		->check(duration_check("interval", 0.1, 3600))
		->type_name("DURATION");
	app.add_option("--history", history,
		       "how far back each pool's history goes (default 1h, at most 86400 intervals)")
		->check(duration_check("history", 1, 7 * 86400.0))
		->type_name("DURATION");
	std::string source = "ppkit";
	app.add_option("-s,--source", source,
		       "pools to sample: ppkit (default), netdev (upstream, Linux >= 6.8), all")
		->check(CLI::IsMember({"ppkit", "netdev", "all"}))
		->type_name("SRC");
	app.add_option("-l,--listen", c.listen,
		       "Prometheus endpoint address:port, or none (default 127.0.0.1:9105)")
		->check(listen_check())
		->type_name("ADDR");
	app.add_option("--textfile", c.textfile,
		       "also write the metrics to FILE every sample (node_exporter textfile)")
		->type_name("FILE");
	app.add_option("--socket", c.socket, "JSON API socket, or none (default /run/ppctld/ppctld.sock)")
		->type_name("PATH");
	std::string mode = "0600";
	app.add_option("--socket-mode", mode, "the socket's permissions, octal (default 0600)")
		->check(CLI::Validator(
			[](std::string &s) -> std::string {
				std::size_t pos = 0;
				unsigned long v = 0;
				try {
					v = std::stoul(s, &pos, 8);
				} catch (const std::exception &) {
					pos = 0;
				}
				if (s.empty() || pos != s.size() || v > 0777)
					return "bad socket mode '" + s + "': expected octal 0000..0777, e.g. 0660";
				return {};
			},
			"", ""))
		->type_name("MODE");
	app.add_option("--socket-group", c.socket_group,
		       "group that owns the socket (with --socket-mode 0660: who may use ppctl history)")
		->type_name("GROUP");
	app.add_option("--max-clients", c.max_clients, "API connections at once (default 16)")
		->check(CLI::Range(1, 1024))
		->type_name("N");
	double hit_pct = c.alerts.hit_below * 100;
	app.add_option("--alert-hit-below", hit_pct,
		       "alert when the allocation hit rate stays below PCT percent (default 50; 0: off)")
		->check(CLI::Range(0.0, 100.0))
		->type_name("PCT");
	std::string hit_for = "30s", leak_for = "60s";
	app.add_option("--alert-hit-for", hit_for, "... for this long (default 30s)")
		->check(duration_check("alert-hit-for", 0, 86400))
		->type_name("DURATION");
	app.add_option("--alert-leak-for", leak_for,
		       "alert when in-flight pages rise at every sample this long (default 60s; 0: off)")
		->check(duration_check("alert-leak-for", 0, 86400))
		->type_name("DURATION");
	app.add_option("--alert-leak-min-pages", c.alerts.leak_min_pages,
		       "... by at least N pages (default 64)")
		->check(CLI::Range(1, 1 << 30))
		->type_name("N");
	app.add_flag("-f,--foreground", c.foreground,
		     "stay in the foreground and log to stderr too (systemd, testing)");
	app.add_flag("--log-stderr", c.log_stderr, "log to stderr as well as syslog");
	app.add_option("--pidfile", c.pidfile, "write the daemon's pid here")->type_name("FILE");

	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		int code = app.exit(e, out, err);
		return {std::nullopt, code == 0 ? 0 : 1};
	}

	c.interval_s = *ppkit::parse_duration(interval);
	c.history_s = *ppkit::parse_duration(history);
	c.alerts.hit_below = hit_pct / 100;
	c.alerts.hit_for_s = *ppkit::parse_duration(hit_for);
	c.alerts.leak_for_s = *ppkit::parse_duration(leak_for);
	c.socket_mode = static_cast<unsigned>(std::stoul(mode, nullptr, 8));
	if (source == "all")
		c.sources = {"ppkit", "netdev"};
	else
		c.sources = {source};
	if (c.listen == "none")
		c.listen.clear();
	if (c.socket == "none")
		c.socket.clear();
	if (c.foreground)
		c.log_stderr = true;
	c.config_file = cfg->count() ? cfg->as<std::string>() : std::string();
	if (c.history_s < c.interval_s) {
		err << "ppctld: --history (" << history << ") is shorter than --interval (" << interval
		    << ")\n";
		return {std::nullopt, 1};
	}
	if (const std::size_t points = c.history_points(); points > kMaxHistoryPoints) {
		const long long interval_ms = std::llround(c.interval_s * 1000);
		const long long history_ms = std::llround(c.history_s * 1000);
		const auto mib = [](std::size_t n) {
			return static_cast<double>(n * sizeof(Point)) / (1 << 20);
		};
		err << fmt::format("ppctld: --history {} at --interval {} is {} points per pool "
				   "({:.0f} MiB a pool); at most {} ({:.0f} MiB a pool) are kept: "
				   "sample less often (--interval {} or more) or keep less "
				   "(--history {} or less)\n",
				   history, interval, points, mib(points), kMaxHistoryPoints,
				   mib(kMaxHistoryPoints),
				   duration_text((history_ms + kMaxHistoryPoints - 1) /
						 static_cast<long long>(kMaxHistoryPoints)),
				   duration_text(interval_ms * static_cast<long long>(kMaxHistoryPoints)));
		return {std::nullopt, 1};
	}
	return {c, 0};
}

}  // namespace ppctld
