// SPDX-License-Identifier: GPL-2.0
#include "cli.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <ostream>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <linux/ppkit.h>

#include "advice.h"
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

// "a, b or c"
std::string alternatives(const std::vector<std::string> &names)
{
	std::string s;
	for (std::size_t i = 0; i < names.size(); i++)
		s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
	return s;
}

// One of @names, with a message that lists them.
CLI::Validator one_of(const char *what, std::vector<std::string> names)
{
	return CLI::Validator(
		[=](std::string &s) -> std::string {
			if (std::find(names.begin(), names.end(), s) != names.end())
				return {};
			return "bad " + std::string(what) + " '" + s + "': expected " +
			       alternatives(names);
		},
		"", "");
}

template <typename E>
std::vector<std::string> names_of()
{
	std::vector<std::string> v;
	for (std::string_view n : ppkit::sim_names<E>())
		v.emplace_back(n);
	return v;
}

// An ethertype: hex with 0x, or decimal; below 0x0600 the field is an
// 802.3 length, not a type.
std::optional<std::uint16_t> parse_ethertype(const std::string &s)
{
	bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *b = s.data() + (hex ? 2 : 0), *e = s.data() + s.size();
	std::uint32_t v = 0;
	auto [p, ec] = std::from_chars(b, e, v, hex ? 16 : 10);
	if (b == e || ec != std::errc() || p != e || v < 0x0600 || v > 0xffff)
		return std::nullopt;
	return static_cast<std::uint16_t>(v);
}

CLI::Validator ethertype_check()
{
	return CLI::Validator(
		[](std::string &s) -> std::string {
			if (parse_ethertype(s))
				return {};
			return "bad ethertype '" + s + "': expected 0x0600..0xffff (hex with 0x, "
			       "or decimal), e.g. 0x0800 for UDP/IPv4";
		},
		"", "");
}

// A duration: 90, 1.5s, 10m, 2h, 1d.
CLI::Validator duration_check(const char *what)
{
	return CLI::Validator(
		[=](std::string &s) -> std::string {
			if (ppkit::parse_duration(s))
				return {};
			return "bad " + std::string(what) + " '" + s +
			       "': expected a duration like 90, 30s, 10m or 2h";
		},
		"", "");
}

// A CPU: 0, 1, ... or @word (-1 in the uapi).
CLI::Validator cpu_check(const char *what, const char *word)
{
	return CLI::Validator(
		[=](std::string &s) -> std::string {
			if (s == word || s == "-1")
				return {};
			std::uint32_t v = 0;
			auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
			// The uapi's CPUs are s32, the kernel takes up to S16_MAX.
			if (ec != std::errc() || p != s.data() + s.size() || v > INT16_MAX)
				return "bad " + std::string(what) + " '" + s + "': expected a CPU number or " +
				       word;
			return {};
		},
		"", "");
}

std::int32_t cpu_value(const std::string &s, const char *word)
{
	if (s == word || s == "-1")
		return -1;
	return static_cast<std::int32_t>(std::stoul(s));
}

// drop, pass, tx, or an object file.
CLI::Validator prog_check()
{
	return CLI::Validator(
		[](std::string &s) -> std::string {
			if (ppkit::xdp_bundled_from_string(s))
				return {};
			if (s.size() > 2 && s.ends_with(".o")) {
				if (access(s.c_str(), R_OK) == 0)
					return {};
				return "cannot read XDP object file '" + s + "': " + std::strerror(errno);
			}
			return "bad program '" + s + "': expected drop, pass, tx or FILE.o";
		},
		"", "");
}

// The options of ppctl sim and ppctl xdp, and where they land.
struct SimXdpCli {
	CLI::App *sim, *sim_list, *sim_add, *sim_del, *sim_set, *gen, *gen_start, *gen_stop;
	CLI::App *xdp, *xdp_attach, *xdp_detach, *xdp_status;
	std::string pool, rx, sync, prefetch, cache, numa, frag, irq_cpu, mode = "native", ethertype,
		gen_cpu;
	CLI::Option *set_ring = nullptr, *gen_rate = nullptr, *gen_size = nullptr,
		    *gen_port = nullptr, *gen_count = nullptr;
	std::uint32_t ring = 0, size = 0;
	std::uint64_t rate = 0, count = 0;
	std::uint16_t port = 0;
};

void add_ifname(CLI::App *cmd, Options &o)
{
	cmd->add_option("IFNAME", o.ifname, "the interface")->required();
}

void add_sim_commands(Options &o, SimXdpCli &c);
void add_xdp_commands(Options &o, SimXdpCli &c);

// sim and xdp get their own subcommands and options only when they are on
// the command line (CLI11's pre-parse callback runs before their arguments
// are read): nine CLI11::Apps and their options are most of what building
// the command line costs, and any other command would build them for
// nothing.
void add_sim(CLI::App &app, Options &o, SimXdpCli &c)
{
	c.sim = app.add_subcommand("sim", "ppsim software NICs: list, add, del, set, gen");
	c.sim->require_subcommand(0, 1);
	c.sim->preparse_callback([&o, &c](std::size_t) { add_sim_commands(o, c); });
}

void add_sim_commands(Options &o, SimXdpCli &c)
{
	c.sim_list = c.sim->add_subcommand("list", "ppsim devices, one per line");

	c.sim_add = c.sim->add_subcommand("add", "create a device, or a pair wired back to back");
	auto u32opt = [](CLI::App *cmd, const char *name, std::optional<std::uint32_t> &dst,
			 const char *what, const char *help, std::uint64_t min, std::uint64_t max) {
		cmd->add_option_function<std::uint32_t>(
			   name, [&dst](const std::uint32_t &v) { dst = v; }, help)
			->check(uint_check(what, min, max, ""))
			->type_name("N");
	};
	u32opt(c.sim_add, "--rx-queues", o.sim_new.rx_queues, "queue count", "RX queues", 1, 65535);
	u32opt(c.sim_add, "--tx-queues", o.sim_new.tx_queues, "queue count", "TX queues", 1, 65535);
	u32opt(c.sim_add, "--ring-size", o.sim_new.ring_size, "ring size",
	       "RX descriptors per queue", 1, UINT32_MAX);
	c.sim_add->add_flag("--pair", o.sim_new.pair, "two ports wired back to back");

	c.sim_del = c.sim->add_subcommand("del", "delete a device (and its peer)");
	add_ifname(c.sim_del, o);

	c.sim_set = c.sim->add_subcommand("set", "change a device's knobs (rings and pools are rebuilt)");
	add_ifname(c.sim_set, o);
	c.sim_set->add_option("--pool", c.pool, "ppkit, native (the kernel's) or none")
		->check(one_of("pool", names_of<ppkit::SimPool>()))
		->type_name("POOL");
	c.sim_set->add_option("--rx", c.rx, "zerocopy (build_skb) or copy")
		->check(one_of("rx mode", names_of<ppkit::SimRx>()))
		->type_name("MODE");
	c.sim_set->add_option("--sync", c.sync, "precise or full DMA sync for device")
		->check(one_of("sync", names_of<ppkit::SimSync>()))
		->type_name("SYNC");
	c.sim_set->add_option("--prefetch", c.prefetch, "after-sync or before-sync")
		->check(one_of("prefetch", names_of<ppkit::SimPrefetch>()))
		->type_name("WHEN");
	c.sim_set->add_option("--cache", c.cache, "lifo (NAPI cache) or fifo (ring)")
		->check(one_of("cache", names_of<ppkit::SimCache>()))
		->type_name("ORDER");
	c.sim_set->add_option("--numa-rule", c.numa, "on: far-node pages are released")
		->check(one_of("numa rule", {"on", "off"}))
		->type_name("on|off");
	c.sim_set->add_option("--frag", c.frag,
			      "on: RX buffers are fragments of pool pages (pool ppkit)")
		->check(one_of("frag", {"on", "off"}))
		->type_name("on|off");
	c.sim_set->add_option("--irq-cpu", c.irq_cpu, "queue 0's interrupt CPU (queue q: +q); auto: CPU q")
		->check(cpu_check("irq cpu", "auto"))
		->type_name("N|auto");
	c.set_ring = c.sim_set->add_option("--ring-size", c.ring, "RX descriptors per queue")
			     ->check(uint_check("ring size", 1, UINT32_MAX, ""))
			     ->type_name("N");

	c.gen = c.sim->add_subcommand("gen", "the traffic generator: start, stop");
	c.gen->require_subcommand(0, 1);
	c.gen_start = c.gen->add_subcommand("start", "write frames into the device's RX rings (root)");
	add_ifname(c.gen_start, o);
	c.gen_rate = c.gen_start->add_option("--rate", c.rate, "frames/s over all queues, 0: line rate")
			     ->check(uint_check("rate", 0, UINT64_MAX, ""))
			     ->type_name("PPS");
	c.gen_size = c.gen_start->add_option("--size", c.size, "frame bytes without FCS (60..MTU+14)")
			     ->check(uint_check("frame size", 60, 65535 + 14, ""))
			     ->type_name("BYTES");
	c.gen_start->add_option("--ethertype", c.ethertype, "0x0800 (UDP/IPv4, the default) or another")
		->check(ethertype_check())
		->type_name("TYPE");
	c.gen_port = c.gen_start->add_option("--dst-port", c.port, "UDP destination port")
			     ->check(uint_check("port", 1, 65535, ""))
			     ->type_name("N");
	c.gen_count = c.gen_start->add_option("--count", c.count, "frames to send, 0: until stopped")
			      ->check(uint_check("count", 0, UINT64_MAX, ""))
			      ->type_name("N");
	c.gen_start->add_option("--cpu", c.gen_cpu, "CPU the generator runs on (default: the last)")
		->check(cpu_check("cpu", "last"))
		->type_name("N");
	c.gen_stop = c.gen->add_subcommand("stop", "stop the generator");
	add_ifname(c.gen_stop, o);
}

void add_xdp(CLI::App &app, Options &o, SimXdpCli &c)
{
	c.xdp = app.add_subcommand("xdp", "XDP programs on an interface: attach, detach, status");
	c.xdp->require_subcommand(0, 1);
	c.xdp->preparse_callback([&o, &c](std::size_t) { add_xdp_commands(o, c); });
}

void add_xdp_commands(Options &o, SimXdpCli &c)
{
	auto mode = [&c](CLI::App *cmd) {
		cmd->add_option("--mode", c.mode, "native (in the driver, default) or generic")
			->check(one_of("mode", {"native", "generic"}))
			->type_name("MODE");
	};
	c.xdp_attach = c.xdp->add_subcommand("attach", "attach a program, replacing the mode's (root)");
	add_ifname(c.xdp_attach, o);
	mode(c.xdp_attach);
	c.xdp_attach->add_option("--prog", o.xdp_prog, "drop (default), pass, tx (MACs swapped) or FILE.o")
		->check(prog_check())
		->type_name("PROG");
	c.xdp_detach = c.xdp->add_subcommand("detach", "detach the mode's program (root)");
	add_ifname(c.xdp_detach, o);
	mode(c.xdp_detach);
	c.xdp_status = c.xdp->add_subcommand("status", "the programs attached, by mode");
	add_ifname(c.xdp_status, o);
}

// The other commands' options, and where they land.
struct MainCli {
	CLI::App *list, *stats, *set, *mon, *hist, *top;
	double interval = 0, top_iv = 1;
	std::uint64_t count = 0, events = 0, frames = 0;
	std::uint32_t ring = 0, batch = 0;
	std::string since, sort = "alloc";
	CLI::Option *iv = nullptr, *ring_opt = nullptr, *batch_opt = nullptr,
		    *events_opt = nullptr, *since_opt = nullptr, *top_iv_opt = nullptr,
		    *frames_opt = nullptr;
};

// Each command's options are added when it is on the command line, as
// sim's are (add_sim()): --help and every other command build none of them.
void add_main(CLI::App &app, Options &o, MainCli &m)
{
	m.list = app.add_subcommand("list", "pools, one per line");

	m.stats = app.add_subcommand("stats", "counters and hit/recycle rates");
	m.stats->preparse_callback([&o, &m](std::size_t) {
		CLI::App *stats = m.stats;
		stats->add_option("POOL_ID", o.ids, "pools to show (default: all)")
			->check(uint_check("pool id", 1, UINT32_MAX, " (see ppctl list)"));
		stats->add_option("-d,--dev", o.dev, "only pools of this interface")->type_name("IFNAME");
		m.iv = stats->add_option("-i,--interval", m.interval,
					 "per-interval rates every SEC seconds, like vmstat")
			       ->check(CLI::Range(0.01, 86400.0))
			       ->type_name("SEC");
		stats->add_option("-c,--count", m.count, "stop after N intervals")
			->needs(m.iv)
			->check(uint_check("count", 1, UINT32_MAX, ""))
			->type_name("N");
		stats->add_flag("-l,--long", o.long_form, "every counter of each pool");
	});

	m.set = app.add_subcommand("set", "change a pool's ring size or refill batch (root)");
	m.set->preparse_callback([&o, &m](std::size_t) {
		m.set->add_option("POOL_ID", o.pool, "the pool")
			->required()
			->check(uint_check("pool id", 1, UINT32_MAX, " (see ppctl list)"));
		m.ring_opt = m.set->add_option("--ring-size", m.ring, "recycle ring entries")
				     ->check(uint_check("ring size", PPKIT_RING_SIZE_MIN,
							PPKIT_RING_SIZE_MAX, ""))
				     ->type_name("N");
		m.batch_opt = m.set->add_option("--refill-batch", m.batch, "pages per cache refill")
				      ->check(uint_check("refill batch", PPKIT_REFILL_BATCH_MIN,
							 PPKIT_REFILL_BATCH_MAX, ""))
				      ->type_name("N");
	});

	m.mon = app.add_subcommand("monitor", "pool add/change/destroy events as they happen");
	m.mon->preparse_callback([&m](std::size_t) {
		m.events_opt = m.mon->add_option("-c,--count", m.events, "stop after N events")
				       ->check(uint_check("count", 1, UINT32_MAX, ""))
				       ->type_name("N");
	});

	auto socket = [&o](CLI::App *sub) {
		sub->add_option("--socket", o.socket, "ppctld's API socket (default /run/ppctld.sock)")
			->type_name("PATH");
	};
	m.hist = app.add_subcommand("history", "a pool's history, kept by ppctld");
	m.hist->preparse_callback([&o, &m, socket](std::size_t) {
		m.hist->add_option("POOL_ID", o.pool, "the pool")
			->required()
			->check(uint_check("pool id", 1, UINT32_MAX, " (see ppctl list)"));
		m.since_opt = m.hist->add_option("--since", m.since,
						 "this far back (default: all ppctld keeps)")
				      ->check(duration_check("since"))
				      ->type_name("DURATION");
		socket(m.hist);
	});
	m.top = app.add_subcommand("top", "pools by allocation rate, refreshed like top (q quits)");
	m.top->preparse_callback([&m, socket](std::size_t) {
		m.top_iv_opt = m.top->add_option("-i,--interval", m.top_iv,
						 "refresh every SEC seconds (default 1)")
				       ->check(CLI::Range(0.1, 86400.0))
				       ->type_name("SEC");
		m.frames_opt = m.top->add_option("-n,--count", m.frames, "stop after N screens (batch use)")
				       ->check(uint_check("count", 1, UINT32_MAX, ""))
				       ->type_name("N");
		m.top->add_option("--sort", m.sort, "alloc (default), hit, recycle, inflight or id")
			->check(one_of("sort key", {"alloc", "hit", "recycle", "inflight", "id"}))
			->type_name("KEY");
		socket(m.top);
	});
}

}  // namespace

namespace {

// The options of a parsed sim or xdp command; @usage words a refusal.
template <typename Usage>
Parsed parse_sim_xdp(Options &o, const SimXdpCli &c, Usage usage)
{
	if (c.sim->parsed()) {
		if (c.sim_list->parsed()) {
			o.command = Command::SimList;
		} else if (c.sim_add->parsed()) {
			o.command = Command::SimAdd;
		} else if (c.sim_del->parsed()) {
			o.command = Command::SimDel;
		} else if (c.sim_set->parsed()) {
			o.command = Command::SimSet;
			ppkit::SimSettings &st = o.sim_set;
			if (!c.pool.empty())
				st.pool = ppkit::sim_from_string<ppkit::SimPool>(c.pool);
			if (!c.rx.empty())
				st.rx = ppkit::sim_from_string<ppkit::SimRx>(c.rx);
			if (!c.sync.empty())
				st.sync = ppkit::sim_from_string<ppkit::SimSync>(c.sync);
			if (!c.prefetch.empty())
				st.prefetch = ppkit::sim_from_string<ppkit::SimPrefetch>(c.prefetch);
			if (!c.cache.empty())
				st.cache = ppkit::sim_from_string<ppkit::SimCache>(c.cache);
			if (!c.numa.empty())
				st.numa_rule = ppkit::on_off_from_string(c.numa);
			if (!c.frag.empty())
				st.frag = ppkit::on_off_from_string(c.frag);
			if (!c.irq_cpu.empty())
				st.irq_cpu = cpu_value(c.irq_cpu, "auto");
			if (c.set_ring->count())
				st.ring_size = c.ring;
			if (st.empty())
				return usage("sim set: give at least one of --pool, --rx, --sync, --prefetch, "
					     "--cache, --numa-rule, --frag, --irq-cpu, --ring-size");
		} else if (c.gen_start->parsed()) {
			o.command = Command::SimGenStart;
			if (c.gen_rate->count())
				o.gen.rate = c.rate;
			if (c.gen_size->count())
				o.gen.size = c.size;
			if (!c.ethertype.empty())
				o.gen.ethertype = parse_ethertype(c.ethertype);
			if (c.gen_port->count())
				o.gen.dst_port = c.port;
			if (c.gen_count->count())
				o.gen.count = c.count;
			if (!c.gen_cpu.empty())
				o.gen.cpu = cpu_value(c.gen_cpu, "last");
		} else if (c.gen_stop->parsed()) {
			o.command = Command::SimGenStop;
		} else if (c.gen->parsed()) {
			return usage("sim gen: start or stop?");
		} else {
			return usage("sim: a command is required: list, add, del, set or gen");
		}
		return {o, kExitOk};
	}
	if (c.xdp_attach->parsed())
		o.command = Command::XdpAttach;
	else if (c.xdp_detach->parsed())
		o.command = Command::XdpDetach;
	else if (c.xdp_status->parsed())
		o.command = Command::XdpStatus;
	else
		return usage("xdp: a command is required: attach, detach or status");
	o.xdp_mode = *ppkit::xdp_mode_from_string(c.mode);
	return {o, kExitOk};
}

}  // namespace

Parsed parse(int argc, const char *const *argv, std::ostream &out, std::ostream &err)
{
	Options o;
	CLI::App app{"Inspect and tune ppkit page pools (pp_backport), or the kernel's own.", "ppctl"};
	app.require_subcommand(0, 1);
	app.set_version_flag("--version", PPKIT_VERSION);
	app.fallthrough();
	app.get_formatter()->column_width(30);
	app.footer("Exit status: 0 ok, 1 usage error, 2 kernel or netlink error, 3 output not\n"
		   "written, 4 internal error.\n"
		   "See Documentation/ppctl.rst (JSON schema, every field).");

	std::string source = "ppkit";
	auto *source_opt = app.add_option("-s,--source", source, "ppkit (default), netdev (upstream, Linux >= 6.8), all")
		->check(CLI::IsMember({"ppkit", "netdev", "all"}))
		->type_name("SRC");
	app.add_flag("-j,--json", o.json, "JSON output (one object per line when streaming)");
	app.add_flag("-r,--raw", o.raw, "exact numbers, not 1.2M");

	MainCli m;
	add_main(app, o, m);

	SimXdpCli sx;
	add_sim(app, o, sx);
	add_xdp(app, o, sx);

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
		return usage("a command is required: list, stats, set, monitor, history, top, sim or xdp");
	if (sx.sim->parsed() || sx.xdp->parsed()) {
		if (source_opt->count())
			return usage("sim and xdp commands take no --source");
		return parse_sim_xdp(o, sx, usage);
	}
	if (m.list->parsed()) {
		o.command = Command::List;
	} else if (m.stats->parsed()) {
		o.command = Command::Stats;
		if (m.iv->count())
			o.interval = m.interval;
		if (m.count)
			o.count = m.count;
	} else if (m.set->parsed()) {
		o.command = Command::Set;
		if (m.ring_opt->count())
			o.ring_size = m.ring;
		if (m.batch_opt->count())
			o.refill_batch = m.batch;
	} else if (m.hist->parsed()) {
		o.command = Command::History;
		if (m.since_opt->count())
			o.since = ppkit::parse_duration(m.since);
		o.socket_given = m.hist->count("--socket") > 0;
	} else if (m.top->parsed()) {
		o.command = Command::Top;
		if (m.top_iv_opt->count())
			o.interval = m.top_iv;
		if (m.frames_opt->count())
			o.count = m.frames;
		const std::string &sort = m.sort;
		o.sort = sort == "hit"	    ? TopSort::Hit
			 : sort == "recycle"  ? TopSort::Recycle
			 : sort == "inflight" ? TopSort::Inflight
			 : sort == "id"	      ? TopSort::Id
					      : TopSort::Alloc;
		o.socket_given = m.top->count("--socket") > 0;
	} else {
		o.command = Command::Monitor;
		if (m.events_opt->count())
			o.count = m.events;
	}

	if (o.command == Command::Set && !o.ring_size && !o.refill_batch)
		return usage("set: give --ring-size N and/or --refill-batch N");
	if (o.command == Command::History && o.source == SourceSel::All)
		return usage("history: pool ids are per source: give --source ppkit or --source netdev");
	if (o.command == Command::Set && o.source != SourceSel::Ppkit)
		return usage("set: only ppkit pools can be changed (drop --source)");
	if (o.command == Command::Stats && !o.ids.empty() && o.source == SourceSel::All)
		return usage("stats: pool ids are per source: give --source ppkit or --source netdev");
	return {o, kExitOk};
}

namespace {

int run_command(int argc, const char *const *argv, std::ostream &out, std::ostream &err)
{
	Parsed p = parse(argc, argv, out, err);
	if (!p.options)
		return p.exit;
	const Options &o = *p.options;
	// libppkit says what failed; what to do next is ppctl's to say.
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
		case Command::History:
			return cmd_history(o, out, err);
		case Command::Top:
			return cmd_top(o, out, err);
		case Command::SimList:
		case Command::SimAdd:
		case Command::SimDel:
		case Command::SimSet:
		case Command::SimGenStart:
		case Command::SimGenStop:
			return cmd_sim(o, out, err);
		case Command::XdpAttach:
		case Command::XdpDetach:
		case Command::XdpStatus:
			return cmd_xdp(o, out, err);
		}
	} catch (const ppkit::Error &e) {
		throw advised(e, o);
	}
	return kExitOk;
}

// The output fails loudly for as long as run() uses it: a failed write
// throws where it happens, streaming commands included, instead of a
// silent exit 0.  (What it throws is libstdc++'s std::__ios_failure, which
// a catch of the C++11 ABI's std::ios_base::failure does not match: the
// stream's badbit is what tells a failed write.)
class ThrowOnFailure {
public:
	explicit ThrowOnFailure(std::ostream &out) : out_(out), old_(out.exceptions())
	{
		out_.exceptions(std::ios::badbit);
	}
	~ThrowOnFailure() { restore(); }
	// Before the error is reported: std::cerr flushes std::cout (tie())
	// before each write, which must not throw again.
	void restore()
	{
		try {
			out_.exceptions(old_);
		} catch (const std::exception &) {
			// A stream that asked for exceptions itself: reported already.
		}
	}
	ThrowOnFailure(const ThrowOnFailure &) = delete;
	ThrowOnFailure &operator=(const ThrowOnFailure &) = delete;

private:
	std::ostream &out_;
	std::ios::iostate old_;
};

void flush_quietly(std::ostream &out)
{
	try {
		out.flush();
	} catch (const std::exception &) {
		// The error being reported comes first.
	}
}

constexpr const char *kReportBug = " (a bug in ppctl: please report it, with the command line)\n";

}  // namespace

int report_error(std::ostream &out, std::ostream &err)
{
	const int saved = errno;
	try {
		throw;
	} catch (const UsageError &e) {
		err << "ppctl: " << e.what() << "\n";
		return kExitUsage;
	} catch (const ppkit::Error &e) {
		flush_quietly(out);
		err << "ppctl: " << e.what() << "\n";
		return kExitKernel;
	} catch (...) {
		if (out.bad()) {
			err << "ppctl: cannot write the output"
			    << (saved ? std::string(": ") + std::strerror(saved) : std::string())
			    << " (is the disk full, or the reader gone?)\n";
			return kExitOutput;
		}
	}
	// Anything else is ppctl's own failure, not the kernel's.
	flush_quietly(out);
	try {
		throw;
	} catch (const std::exception &e) {
		err << "ppctl: internal error: " << e.what() << kReportBug;
	} catch (...) {
		err << "ppctl: internal error: an unknown exception" << kReportBug;
	}
	return kExitInternal;
}

int run(int argc, const char *const *argv, std::ostream &out, std::ostream &err)
{
	ThrowOnFailure guard(out);
	try {
		int rc = run_command(argc, argv, out, err);
		out.flush();
		return rc;
	} catch (...) {
		guard.restore();
		return report_error(out, err);
	}
}

}  // namespace ppctl
