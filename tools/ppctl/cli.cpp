// SPDX-License-Identifier: GPL-2.0
#include "cli.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <linux/ppkit.h>

#include "advice.h"
#include "commands.h"
#include "json_out.h"
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

// One of @names, with a message that lists them; @deprecated names are
// accepted but not listed.
CLI::Validator one_of(const char *what, std::vector<std::string> names,
		      std::vector<std::string> deprecated = {})
{
	return CLI::Validator(
		[=](std::string &s) -> std::string {
			if (std::find(names.begin(), names.end(), s) != names.end() ||
			    std::find(deprecated.begin(), deprecated.end(), s) != deprecated.end())
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
	c.xdp_attach = c.xdp->add_subcommand("attach", "attach a program to the mode (root)");
	add_ifname(c.xdp_attach, o);
	mode(c.xdp_attach);
	c.xdp_attach->add_option("--prog", o.xdp_prog, "drop (default), pass, tx (MACs swapped) or FILE.o")
		->check(prog_check())
		->type_name("PROG");
	c.xdp_attach->add_flag("-f,--force", o.xdp_force,
			       "replace the program already attached in the mode (ip link's -force)");
	c.xdp_detach = c.xdp->add_subcommand("detach", "detach the mode's program (root)");
	add_ifname(c.xdp_detach, o);
	mode(c.xdp_detach);
	c.xdp_status = c.xdp->add_subcommand("status", "the programs attached, by mode");
	add_ifname(c.xdp_status, o);
}

// The other commands' options, and where they land.
struct MainCli {
	CLI::App *list, *stats, *set, *holders, *mon, *hist, *top;
	double interval = 0, top_iv = 1;
	std::uint64_t count = 0, events = 0, frames = 0;
	std::uint32_t ring = 0, batch = 0;
	std::string since, sort = "served";
	std::string pool_sort = "id", state, group_by = "pool";
	CLI::Option *iv = nullptr, *ring_opt = nullptr, *batch_opt = nullptr,
		    *events_opt = nullptr, *since_opt = nullptr, *top_iv_opt = nullptr,
		    *frames_opt = nullptr;
};

// list's and stats' filters and --sort (@keys: the sort keys it takes).
void add_selection(CLI::App *cmd, Options &o, MainCli &m, std::vector<std::string> keys)
{
	cmd->add_option("-d,--dev", o.dev, "only pools of this interface")->type_name("IFNAME");
	cmd->add_option_function<std::string>(
		   "--owner", [&o](const std::string &v) { o.filter.owner = v; },
		   "only pools of this driver or module")
		->type_name("NAME");
	cmd->add_option("--state", m.state, "only live (attached) or detached (zombie) pools")
		->check(one_of("state", {"live", "detached"}, {"attached", "zombie"}))
		->type_name("STATE");
	std::string help = "order by " + alternatives(keys) + " (default id)";
	cmd->add_option("--sort", m.pool_sort, help)->check(one_of("sort key", keys))->type_name("KEY");
}

// Each command's options are added when it is on the command line, as
// sim's are (add_sim()): --help and every other command build none of them.
void add_main(CLI::App &app, Options &o, MainCli &m)
{
	m.list = app.add_subcommand("list", "pools, one per line");
	m.list->preparse_callback([&o, &m](std::size_t) {
		add_selection(m.list, o, m, {"id", "dev", "owner", "state", "inflight"});
	});

	m.stats = app.add_subcommand("stats", "counters and hit/recycle rates");
	m.stats->preparse_callback([&o, &m](std::size_t) {
		CLI::App *stats = m.stats;
		stats->add_option("POOL_ID", o.ids, "pools to show (default: all)")
			->check(uint_check("pool id", 1, UINT32_MAX, " (see ppctl list)"));
		add_selection(stats, o, m,
			      {"id", "dev", "owner", "state", "inflight", "served", "hit", "recycle"});
		stats->add_option("-g,--group-by", m.group_by, "pool (default) or device: sum each device's pools")
			->check(one_of("group", {"pool", "device"}))
			->type_name("WHAT");
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

	m.holders = app.add_subcommand("holders",
				       "who holds each pool's pages: driver, stack, which sockets (root)");
	m.holders->preparse_callback([&o, &m](std::size_t) {
		m.holders->add_option("POOL_ID", o.ids, "pools to ask about (default: all)")
			->check(uint_check("pool id", 1, UINT32_MAX, " (see ppctl list)"));
		m.holders->add_option("-d,--dev", o.dev, "only pools of this interface")
			->type_name("IFNAME");
	});

	m.mon = app.add_subcommand("monitor", "pool add/change/destroy events as they happen");
	m.mon->preparse_callback([&m](std::size_t) {
		m.events_opt = m.mon->add_option("-c,--count", m.events, "stop after N events")
				       ->check(uint_check("count", 1, UINT32_MAX, ""))
				       ->type_name("N");
	});

	auto socket = [&o](CLI::App *sub) {
		sub->add_option("--socket", o.socket, "ppctld's API socket (default /run/ppctld/ppctld.sock)")
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
	m.top = app.add_subcommand("top", "pools by pages served, refreshed like top (q quits)");
	m.top->preparse_callback([&m, socket](std::size_t) {
		m.top_iv_opt = m.top->add_option("-i,--interval", m.top_iv,
						 "refresh every SEC seconds (default 1)")
				       ->check(CLI::Range(0.1, 86400.0))
				       ->type_name("SEC");
		m.frames_opt = m.top->add_option("-n,--count", m.frames, "stop after N screens (batch use)")
				       ->check(uint_check("count", 1, UINT32_MAX, ""))
				       ->type_name("N");
		// "alloc": the old name of "served", deprecated (it never meant
		// pages from the page allocator).
		m.top->add_option("--sort", m.sort, "served (default), hit, recycle, inflight or id")
			->check(one_of("sort key", {"served", "hit", "recycle", "inflight", "id"},
					{"alloc"}))
			->type_name("KEY");
		socket(m.top);
	});
}

// CLI11's, but without the blank line it leaves for the group of hidden
// options (--human's): --help stays within 24 lines.
class HelpFormatter : public CLI::Formatter {
public:
	std::string make_help(const CLI::App *app, std::string name,
			      CLI::AppFormatMode mode) const override
	{
		std::string s = CLI::Formatter::make_help(app, std::move(name), mode);
		for (std::size_t p; (p = s.find("\n\n\n")) != std::string::npos;)
			s.erase(p, 1);
		return s;
	}
};

// Why @name cannot name a network namespace of /run/netns, if it cannot.
std::optional<std::string> netns_name_error(const std::string &name)
{
	if (name == "." || name == ".." || name.find('/') != std::string::npos ||
	    name.find('\0') != std::string::npos)
		return "bad network namespace name '" + name + "': a name in /run/netns " +
		       "(see ip netns list)";
	return std::nullopt;
}

// Whether the command line asks for JSON (-j, --json, -p, --pretty, or a
// cluster of flags such as -jp), and if so whether pretty: how to report a
// command line CLI11 could not parse.  Only flags that take no value may be
// clustered, so a cluster is -j, -p and -r.
std::optional<bool> json_asked(int argc, const char *const *argv)
{
	bool json = false, pretty = false;
	for (int i = 1; i < argc; i++) {
		std::string_view a = argv[i];
		if (a == "--")
			break;
		if (a == "--json") {
			json = true;
		} else if (a == "--pretty") {
			pretty = true;
		} else if (a.size() > 1 && a[0] == '-' && a[1] != '-' &&
			   a.find_first_not_of("jpr", 1) == std::string_view::npos) {
			json |= a.find('j') != std::string_view::npos;
			pretty |= a.find('p') != std::string_view::npos;
		}
	}
	if (!json && !pretty)
		return std::nullopt;
	return pretty;
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
	app.formatter(std::make_shared<HelpFormatter>());
	app.get_formatter()->column_width(30);
	app.footer("Exit status: 0 ok, 1 usage, 2 kernel, 3 output, 4 internal error; see ppctl(8).");

	std::string source = "ppkit";
	auto *source_opt = app.add_option("-s,--source", source, "ppkit (default), netdev (upstream, Linux >= 6.8), all")
		->check(one_of("source", {"ppkit", "netdev", "all"}))
		->type_name("SRC");
	app.add_flag("-j,--json", o.json, "JSON output (one object per line when streaming)");
	app.add_flag("-p,--pretty", o.pretty, "indented JSON (implies --json)");
	app.add_option("-n,--netns", o.netns, "run in network namespace NAME (/run/netns, as ip -n)")
		->type_name("NAME");
	app.add_flag("-r,--raw", o.raw, "exact numbers (default when piped; --human: 1.2M)");
	// Named in --raw's line (HelpFormatter): --help stays within 24 lines.
	app.add_flag("--human", o.human, "1.2M even when piped")->group("");

	MainCli m;
	add_main(app, o, m);

	SimXdpCli sx;
	add_sim(app, o, sx);
	add_xdp(app, o, sx);

	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		// --help and --version are "errors" of exit code 0.
		if (e.get_exit_code() != 0) {
			if (auto j = json_asked(argc, argv)) {
				out << error_doc(e.what(), 0, {}, *j);
				return {std::nullopt, kExitUsage};
			}
		}
		int code = app.exit(e, out, err);
		return {std::nullopt, code == 0 ? kExitOk : kExitUsage};
	}
	if (o.pretty)
		o.json = true;

	o.source = source == "netdev" ? SourceSel::Netdev
		 : source == "all"    ? SourceSel::All
				      : SourceSel::Ppkit;
	auto usage = [&](const std::string &msg) {
		if (o.json)
			out << error_doc(msg, 0, {}, o.pretty);
		else
			err << "ppctl: " << msg << "\nRun with --help for more information.\n";
		return Parsed{std::nullopt, kExitUsage};
	};
	if (o.raw && o.human)
		return usage("--raw and --human exclude each other");
	if (app.get_subcommands().empty())
		return usage("a command is required: list, stats, set, holders, monitor, history, top, sim or xdp");
	if (!o.netns.empty())
		if (auto why = netns_name_error(o.netns))
			return usage(*why);
	if (sx.sim->parsed() || sx.xdp->parsed()) {
		if (source_opt->count())
			return usage("sim and xdp commands take no --source");
		return parse_sim_xdp(o, sx, usage);
	}
	if (m.list->parsed() || m.stats->parsed()) {
		o.pool_sort = *sort_key_by_name(m.pool_sort);
		if (!m.state.empty())
			o.filter.detached = m.state == "detached" || m.state == "zombie";
	}
	if (m.list->parsed()) {
		o.command = Command::List;
	} else if (m.stats->parsed()) {
		o.command = Command::Stats;
		if (m.iv->count())
			o.interval = m.interval;
		if (m.count)
			o.count = m.count;
		o.group_by_device = m.group_by == "device";
		if (o.group_by_device && (o.interval || o.long_form))
			return usage("stats --group-by device sums cumulative counters: it takes no "
				     "--interval or --long");
		if (o.group_by_device &&
		    (o.pool_sort == SortKey::Owner || o.pool_sort == SortKey::State))
			return usage("stats --group-by device: a device has no single " +
				     std::string(to_string(o.pool_sort)) +
				     ": sort by dev, inflight, served, hit or recycle");
	} else if (m.set->parsed()) {
		o.command = Command::Set;
		if (m.ring_opt->count())
			o.ring_size = m.ring;
		if (m.batch_opt->count())
			o.refill_batch = m.batch;
	} else if (m.holders->parsed()) {
		o.command = Command::Holders;
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
					      : TopSort::Served;	// "served", or "alloc"
		o.socket_given = m.top->count("--socket") > 0;
	} else {
		o.command = Command::Monitor;
		if (m.events_opt->count())
			o.count = m.events;
	}

	if (!o.netns.empty()) {
		// ppkit's family answers in the initial namespace only; the
		// kernel's own pools (netdev) are per namespace.
		if (o.command == Command::Set || o.command == Command::Holders)
			return usage("-n: set and holders ask ppkit's family, which answers in the "
				     "initial network namespace only: drop -n");
		bool pools = o.command == Command::List || o.command == Command::Stats ||
			     o.command == Command::Monitor;
		if (pools && !source_opt->count())
			o.source = SourceSel::Netdev;
		else if (pools && o.source != SourceSel::Netdev)
			return usage("-n: ppkit's netlink family answers in the initial network "
				     "namespace only; pools per namespace are the kernel's: use "
				     "--source netdev (or drop -n)");
		if (o.command == Command::History || o.command == Command::Top)
			return usage("-n: ppctld samples the pools of its own namespace; history and "
				     "top take no -n");
	}
	if (o.command == Command::Set && !o.ring_size && !o.refill_batch)
		return usage("set: give --ring-size N and/or --refill-batch N");
	if (o.command == Command::History && o.source == SourceSel::All)
		return usage("history: pool ids are per source: give --source ppkit or --source netdev");
	if (o.command == Command::Holders && o.source != SourceSel::Ppkit)
		return usage("holders: only ppkit pools say who holds their pages (drop --source)");
	if (o.command == Command::Set && o.source != SourceSel::Ppkit)
		return usage("set: only ppkit pools can be changed (drop --source)");
	if (o.command == Command::Stats && !o.ids.empty() && o.source == SourceSel::All)
		return usage("stats: pool ids are per source: give --source ppkit or --source netdev");
	return {o, kExitOk};
}

namespace {

// An error, and the exit status for it: under --json a document on stdout
// (error_doc(), as bpftool does), else "ppctl: MESSAGE" on stderr.
int report(const Options &o, std::ostream &out, std::ostream &err, const std::string &message,
	   int sys_errno, const std::string &extack, int exit)
{
	out.flush();
	if (o.json) {
		// A document left half written ends its line first (-p's buffer).
		if (auto *pb = dynamic_cast<PrettyJsonBuf *>(out.rdbuf()))
			pb->finish();
		out << error_doc(message, sys_errno, extack, false) << std::flush;
	} else {
		err << "ppctl: " << message << "\n";
	}
	return exit;
}

// The output streams fail loudly while a command runs: a failed write
// throws where it happens, streaming commands included, instead of a
// silent exit 0.  (What it throws is libstdc++'s std::__ios_failure, which
// a catch of the C++11 ABI's std::ios_base::failure does not match: a
// stream's badbit is what tells a failed write.)  restore() before any
// error is written: std::cerr flushes std::cout (tie()) first, which must
// not throw again.
class OutputGuard {
public:
	OutputGuard() = default;
	~OutputGuard() { restore(); }
	OutputGuard(const OutputGuard &) = delete;
	OutputGuard &operator=(const OutputGuard &) = delete;

	void watch(std::ostream &s)
	{
		watched_.push_back({&s, s.exceptions()});
		s.exceptions(std::ios::badbit);
	}
	bool failed() const
	{
		return std::any_of(watched_.begin(), watched_.end(),
				   [](const Watched &w) { return w.stream->bad(); });
	}
	void restore()
	{
		for (auto it = watched_.rbegin(); it != watched_.rend(); ++it) {
			try {
				it->stream->exceptions(it->old);
			} catch (const std::exception &) {
				// A stream that asked for exceptions itself: reported already.
			}
		}
		watched_.clear();
	}

private:
	struct Watched {
		std::ostream *stream;
		std::ios::iostate old;
	};
	std::vector<Watched> watched_;
};

void flush_quietly(std::ostream &out)
{
	try {
		out.flush();
	} catch (const std::exception &) {
		// The error being reported comes first.
	}
}

struct Failure {
	int exit;
	std::string message;
	int sys_errno = 0;
	std::string extack;
};

// In a catch block: what the exception being handled means for the user.
// @output_failed: an output stream went bad (the write that failed threw).
Failure failure(bool output_failed, int saved_errno)
{
	try {
		throw;
	} catch (const UsageError &e) {
		return {kExitUsage, e.what(), 0, {}};
	} catch (const ppkit::Error &e) {
		return {kExitKernel, e.what(), e.sys_errno(), e.extack()};
	} catch (...) {
		if (output_failed)
			return {kExitOutput,
				std::string("cannot write the output") +
					(saved_errno ? std::string(": ") + std::strerror(saved_errno)
						     : std::string()) +
					" (is the disk full, or the reader gone?)",
				0, {}};
	}
	// Anything else is ppctl's own failure, not the kernel's.
	const char *report_bug = " (a bug in ppctl: please report it, with the command line)";
	try {
		throw;
	} catch (const std::exception &e) {
		return {kExitInternal, std::string("internal error: ") + e.what() + report_bug, 0, {}};
	} catch (...) {
		return {kExitInternal,
			std::string("internal error: an unknown exception") + report_bug, 0, {}};
	}
}

int run_command(const Options &o, std::ostream &out, std::ostream &err, OutputGuard &guard)
{
	try {
		// libppkit says what failed; what to do next is ppctl's to say.
		try {
			if (!o.netns.empty())
				enter_netns(o.netns);
			switch (o.command) {
			case Command::List:
				return cmd_list(o, out, err);
			case Command::Stats:
				return cmd_stats(o, out, err);
			case Command::Set:
				return cmd_set(o, out, err);
			case Command::Holders:
				return cmd_holders(o, out, err);
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
	} catch (...) {
		const int saved = errno;
		const bool output_failed = guard.failed();
		guard.restore();
		Failure f = failure(output_failed, saved);
		if (f.exit == kExitOutput) {
			// Never a JSON error into the output that failed.
			err << "ppctl: " << f.message << "\n";
			return f.exit;
		}
		return report(o, out, err, f.message, f.sys_errno, f.extack, f.exit);
	}
	return kExitOk;
}

}  // namespace

int report_error(std::ostream &out, std::ostream &err)
{
	const int saved = errno;
	Failure f = failure(out.bad(), saved);
	if (f.exit != kExitOutput)
		flush_quietly(out);
	err << "ppctl: " << f.message << "\n";
	return f.exit;
}

int run(int argc, const char *const *argv, std::ostream &out, std::ostream &err)
{
	OutputGuard guard;
	guard.watch(out);
	std::optional<Options> o;
	try {
		Parsed p = parse(argc, argv, out, err);
		if (!p.options) {
			out.flush();	// --help, --version
			return p.exit;
		}
		o = std::move(p.options);
	} catch (...) {
		guard.restore();
		return report_error(out, err);
	}
	int rc;
	if (!o->pretty) {
		rc = run_command(*o, out, err, guard);
	} else {
		// -p: each document re-indented on its way out, errors included.
		PrettyJsonBuf buf(out);
		std::ostream pretty(&buf);
		guard.watch(pretty);
		rc = run_command(*o, pretty, err, guard);
		if (rc == kExitOutput)
			return rc;	// said so already
		try {
			buf.finish();
		} catch (...) {
			guard.restore();
			return report_error(out, err);
		}
		guard.restore();	// before ~PrettyJsonBuf writes what is left
		guard.watch(out);
	}
	try {
		out.flush();
	} catch (...) {
		guard.restore();
		return report_error(out, err);
	}
	return rc;
}

}  // namespace ppctl
