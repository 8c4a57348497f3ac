// SPDX-License-Identifier: GPL-2.0
#include "cli.h"

#include <charconv>
#include <climits>
#include <ostream>

#include <CLI/CLI.hpp>
#include <linux/ppkit.h>

#include "commands.h"
#include "ppkit/error.h"

namespace ppctl {

namespace {

// A decimal number that fits u32, with a message that says what was wrong.
CLI::Validator uint_check(const char *what, std::uint64_t min, std::uint64_t max,
			  const char *hint)
{
	return CLI::Validator(
		[=](std::string &s) -> std::string {
			std::uint64_t v = 0;
			auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
			if (ec != std::errc() || p != s.data() + s.size() || v < min || v > max)
				return "bad " + std::string(what) + " '" + s + "': expected " +
				       std::to_string(min) + ".." + std::to_string(max) + hint;
			return {};
		},
		"", "");
}

}  // namespace

Parsed parse(int argc, const char *const *argv, std::ostream &out, std::ostream &err)
{
	Options o;
	CLI::App app{"Inspect and tune ppkit page pools (pp_backport), or the kernel's own.", "ppctl"};
	app.require_subcommand(0, 1);
	app.fallthrough();
	app.get_formatter()->column_width(30);
	app.footer("Exit status: 0 ok, 1 usage error, 2 kernel or netlink error.\n"
		   "See Documentation/ppctl.rst (JSON schema, every field).");

	std::string source = "ppkit";
	app.add_option("-s,--source", source, "ppkit (default), netdev (upstream, Linux >= 6.8), all")
		->check(CLI::IsMember({"ppkit", "netdev", "all"}))
		->type_name("SRC");
	app.add_flag("-j,--json", o.json, "JSON output (one object per line when streaming)");
	app.add_flag("-r,--raw", o.raw, "exact numbers, not 1.2M");

	auto *list = app.add_subcommand("list", "pools, one per line");

	auto *stats = app.add_subcommand("stats", "counters and hit/recycle rates");
	stats->add_option("POOL_ID", o.ids, "pools to show (default: all)")
		->check(uint_check("pool id", 1, UINT32_MAX, " (see ppctl list)"));
	stats->add_option("-d,--dev", o.dev, "only pools of this interface")->type_name("IFNAME");
	double interval = 0;
	auto *iv = stats->add_option("-i,--interval", interval,
				     "per-interval rates every SEC seconds, like vmstat")
			   ->check(CLI::Range(0.01, 86400.0))
			   ->type_name("SEC");
	std::uint64_t count = 0;
	stats->add_option("-c,--count", count, "stop after N intervals")
		->needs(iv)
		->check(uint_check("count", 1, UINT32_MAX, ""))
		->type_name("N");
	stats->add_flag("-l,--long", o.long_form, "every counter of each pool");

	auto *set = app.add_subcommand("set", "change a pool's ring size or refill batch (root)");
	set->add_option("POOL_ID", o.pool, "the pool")
		->required()
		->check(uint_check("pool id", 1, UINT32_MAX, " (see ppctl list)"));
	std::uint32_t ring = 0, batch = 0;
	auto *ring_opt = set->add_option("--ring-size", ring, "recycle ring entries")
				 ->check(uint_check("ring size", PPKIT_RING_SIZE_MIN,
						    PPKIT_RING_SIZE_MAX, ""))
				 ->type_name("N");
	auto *batch_opt = set->add_option("--refill-batch", batch, "pages per cache refill")
				  ->check(uint_check("refill batch", PPKIT_REFILL_BATCH_MIN,
						     PPKIT_REFILL_BATCH_MAX, ""))
				  ->type_name("N");

	auto *mon = app.add_subcommand("monitor", "pool add/change/destroy events as they happen");
	std::uint64_t events = 0;
	auto *events_opt = mon->add_option("-c,--count", events, "stop after N events")
				   ->check(uint_check("count", 1, UINT32_MAX, ""))
				   ->type_name("N");

	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		int code = app.exit(e, out, err);
		return {std::nullopt, code == 0 ? kExitOk : kExitUsage};
	}

	o.source = source == "netdev" ? SourceSel::Netdev
		 : source == "all"    ? SourceSel::All
				      : SourceSel::Ppkit;
	auto usage = [&](const std::string &msg) {
		err << "ppctl: " << msg << "\nRun with --help for more information.\n";
		return Parsed{std::nullopt, kExitUsage};
	};
	if (app.get_subcommands().empty())
		return usage("a command is required: list, stats, set or monitor");
	if (list->parsed()) {
		o.command = Command::List;
	} else if (stats->parsed()) {
		o.command = Command::Stats;
		if (iv->count())
			o.interval = interval;
		if (count)
			o.count = count;
	} else if (set->parsed()) {
		o.command = Command::Set;
		if (ring_opt->count())
			o.ring_size = ring;
		if (batch_opt->count())
			o.refill_batch = batch;
	} else {
		o.command = Command::Monitor;
		if (events_opt->count())
			o.count = events;
	}

	if (o.command == Command::Set && !o.ring_size && !o.refill_batch)
		return usage("set: give --ring-size N and/or --refill-batch N");
	if (o.command == Command::Set && o.source != SourceSel::Ppkit)
		return usage("set: only ppkit pools can be changed (drop --source)");
	if (o.command == Command::Stats && !o.ids.empty() && o.source == SourceSel::All)
		return usage("stats: pool ids are per source: give --source ppkit or --source netdev");
	return {o, kExitOk};
}

int run(int argc, const char *const *argv, std::ostream &out, std::ostream &err)
{
	Parsed p = parse(argc, argv, out, err);
	if (!p.options)
		return p.exit;
	const Options &o = *p.options;
	try {
		switch (o.command) {
		case Command::List:
			return cmd_list(o, out, err);
		case Command::Stats:
			return cmd_stats(o, out, err);
		case Command::Set:
			return cmd_set(o, out, err);
		case Command::Monitor:
			return cmd_monitor(o, out, err);
		}
	} catch (const UsageError &e) {
		err << "ppctl: " << e.what() << "\n";
		return kExitUsage;
	} catch (const ppkit::Error &e) {
		out.flush();
		err << "ppctl: " << e.what() << "\n";
		return kExitKernel;
	} catch (const std::exception &e) {
		out.flush();
		err << "ppctl: " << e.what() << "\n";
		return kExitKernel;
	}
	return kExitOk;
}

}  // namespace ppctl
