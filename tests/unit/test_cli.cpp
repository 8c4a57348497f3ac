// SPDX-License-Identifier: GPL-2.0
// ppctl's command line: what it accepts, and how it refuses (exit 1, a
// message, nothing asked of the kernel).
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <ios>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <net/if.h>
#include <sys/wait.h>
#include <unistd.h>

#include "advice.h"
#include "cli.h"
#include "commands.h"
#include "format.h"
#include "ppkit/error.h"

using namespace ppctl;

namespace {

struct Result {
	Parsed parsed;
	std::string out, err;
};

Result parse_args(std::vector<const char *> args)
{
	args.insert(args.begin(), "ppctl");
	std::ostringstream out, err;
	Parsed p = parse(static_cast<int>(args.size()), args.data(), out, err);
	return {p, out.str(), err.str()};
}

struct RunResult {
	int exit;
	std::string out, err;
};

RunResult run_args(std::vector<const char *> args)
{
	args.insert(args.begin(), "ppctl");
	std::ostringstream out, err;
	int rc = run(static_cast<int>(args.size()), args.data(), out, err);
	return {rc, out.str(), err.str()};
}

void refused(std::vector<const char *> args, const std::string &why)
{
	INFO("ppctl " << [&] {
		std::string s;
		for (auto *a : args)
			s += std::string(a) + " ";
		return s;
	}());
	auto r = parse_args(args);
	CHECK_FALSE(r.parsed.options);
	CHECK(r.parsed.exit == kExitUsage);
	CHECK_THAT(r.err, Catch::Contains(why));
	CHECK(r.out.empty());
	// run() stops there too: exit 1 before any netlink.
	CHECK(run_args(args).exit == kExitUsage);
}

}  // namespace

TEST_CASE("commands and their options", "[cli]")
{
	SECTION("list")
	{
		auto r = parse_args({"list"});
		REQUIRE(r.parsed.options);
		CHECK(r.parsed.options->command == Command::List);
		CHECK(r.parsed.options->source == SourceSel::Ppkit);
	}
	SECTION("stats with ids, a device and an interval")
	{
		auto r = parse_args({"stats", "1", "7", "--dev", "lo", "--interval", "0.5", "--count", "3"});
		REQUIRE(r.parsed.options);
		const Options &o = *r.parsed.options;
		CHECK(o.command == Command::Stats);
		CHECK(o.ids == std::vector<std::uint32_t>{1, 7});
		CHECK(o.dev == "lo");
		CHECK(o.interval == 0.5);
		CHECK(o.count == 3u);
	}
	SECTION("global flags before or after the command")
	{
		auto a = parse_args({"--json", "--source", "all", "stats"});
		auto b = parse_args({"stats", "--json", "-s", "all"});
		REQUIRE(a.parsed.options);
		REQUIRE(b.parsed.options);
		CHECK(a.parsed.options->json);
		CHECK(b.parsed.options->json);
		CHECK(b.parsed.options->source == SourceSel::All);
		CHECK(parse_args({"list", "--raw"}).parsed.options->raw);
	}
	SECTION("set")
	{
		auto r = parse_args({"set", "4", "--ring-size", "32768", "--refill-batch", "1"});
		REQUIRE(r.parsed.options);
		CHECK(r.parsed.options->pool == 4);
		CHECK(r.parsed.options->ring_size == 32768u);
		CHECK(r.parsed.options->refill_batch == 1u);
		auto s = parse_args({"set", "4", "--refill-batch", "64"});
		REQUIRE(s.parsed.options);
		CHECK_FALSE(s.parsed.options->ring_size);
	}
	SECTION("monitor")
	{
		auto r = parse_args({"monitor", "--json", "--count", "2"});
		REQUIRE(r.parsed.options);
		CHECK(r.parsed.options->command == Command::Monitor);
		CHECK(r.parsed.options->count == 2u);
	}
}

TEST_CASE("bad pool ids", "[cli]")
{
	refused({"stats", "abc"}, "bad pool id 'abc': expected 1..4294967295 (see ppctl list)");
	refused({"stats", "0"}, "bad pool id '0'");	// ids start at 1
	refused({"stats", "1", "x2"}, "bad pool id 'x2'");
	refused({"stats", "-1"}, "pool id");
	refused({"stats", "4294967296"}, "bad pool id '4294967296'");
	refused({"set", "1.5", "--ring-size", "8"}, "bad pool id '1.5'");
	refused({"set", "--ring-size", "8"}, "POOL_ID is required");
}

TEST_CASE("stats --count needs --interval", "[cli]")
{
	refused({"stats", "--count", "3"}, "--count requires --interval");
	refused({"stats", "--interval", "0"}, "--interval");
	refused({"stats", "--interval", "-1"}, "interval");
	refused({"stats", "--interval", "1", "--count", "0"}, "bad count '0'");
	refused({"monitor", "--count", "0"}, "bad count '0'");
}

TEST_CASE("ring size and refill batch limits", "[cli]")
{
	refused({"set", "1", "--ring-size", "0"}, "bad ring size '0': expected 1..32768");
	refused({"set", "1", "--ring-size", "40000"}, "bad ring size '40000': expected 1..32768");
	refused({"set", "1", "--refill-batch", "0"}, "bad refill batch '0': expected 1..64");
	refused({"set", "1", "--refill-batch", "65"}, "bad refill batch '65': expected 1..64");
	refused({"set", "1"}, "give --ring-size N and/or --refill-batch N");
	refused({"--source", "netdev", "set", "1", "--ring-size", "8"}, "only ppkit pools");
}

TEST_CASE("other usage errors", "[cli]")
{
	refused({}, "a command is required: list, stats, set, holders, monitor, history, top, sim or xdp");
	refused({"frobnicate"}, "not expected: frobnicate");
	refused({"list", "--bogus"}, "--bogus");
	refused({"--source", "bsd", "list"}, "bsd");
	refused({"-s", "all", "stats", "3"}, "pool ids are per source");
}

TEST_CASE("piped output: every column, exact numbers unless --human", "[cli]")
{
	auto layout = [](std::vector<const char *> args) {
		auto r = parse_args(args);
		REQUIRE(r.parsed.options);
		// stdout on /dev/null, a descriptor that is no terminal.
		fflush(stdout);
		int saved = dup(STDOUT_FILENO);
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		REQUIRE(saved >= 0);
		REQUIRE(null >= 0);
		dup2(null, STDOUT_FILENO);
		RenderOptions ro = render_options(*r.parsed.options, false);
		dup2(saved, STDOUT_FILENO);
		close(null);
		close(saved);
		return ro;
	};
	RenderOptions plain = layout({"list"});
	CHECK(plain.raw);
	CHECK(plain.width == kNoWidthLimit);
	CHECK_FALSE(layout({"--human", "list"}).raw);
	CHECK(layout({"-r", "list"}).raw);
	CHECK(layout({"--human", "stats"}).width == kNoWidthLimit);
	refused({"-r", "--human", "list"}, "--raw and --human exclude each other");
}

TEST_CASE("help fits a screen and exits 0", "[cli]")
{
	auto r = parse_args({"--help"});
	CHECK_FALSE(r.parsed.options);
	CHECK(r.parsed.exit == kExitOk);
	CHECK_THAT(r.out, Catch::Contains("list") && Catch::Contains("stats") &&
				  Catch::Contains("set") && Catch::Contains("monitor") &&
				  Catch::Contains("Exit status"));
	auto lines = std::count(r.out.begin(), r.out.end(), '\n');
	CHECK(lines <= 24);
	for (const char *sub : {"list", "stats", "set", "monitor"}) {
		auto s = parse_args({sub, "--help"});
		CHECK(s.parsed.exit == kExitOk);
		CHECK(std::count(s.out.begin(), s.out.end(), '\n') <= 24);
	}
	CHECK_THAT(parse_args({"set", "--help"}).out, Catch::Contains("--ring-size"));
}

TEST_CASE("a device that does not exist is a usage error", "[cli][host]")
{
	auto r = run_args({"stats", "--dev", "ppkit-no-such-if0"});
	CHECK(r.exit == kExitUsage);
	CHECK_THAT(r.err, Catch::Contains("no interface 'ppkit-no-such-if0'"));
}

TEST_CASE("sim commands and their options", "[cli][sim]")
{
	SECTION("list, with --json before or after")
	{
		auto a = parse_args({"sim", "list", "--json"});
		auto b = parse_args({"--json", "sim", "list"});
		REQUIRE(a.parsed.options);
		REQUIRE(b.parsed.options);
		CHECK(a.parsed.options->command == Command::SimList);
		CHECK(a.parsed.options->json);
		CHECK(b.parsed.options->json);
	}
	SECTION("add")
	{
		auto r = parse_args({"sim", "add", "--rx-queues", "4", "--tx-queues", "2",
				     "--ring-size", "512", "--pair"});
		REQUIRE(r.parsed.options);
		const auto &n = r.parsed.options->sim_new;
		CHECK(r.parsed.options->command == Command::SimAdd);
		CHECK(n.rx_queues == 4u);
		CHECK(n.tx_queues == 2u);
		CHECK(n.ring_size == 512u);
		CHECK(n.pair);
		auto d = parse_args({"sim", "add"});
		REQUIRE(d.parsed.options);
		CHECK_FALSE(d.parsed.options->sim_new.rx_queues);
		CHECK_FALSE(d.parsed.options->sim_new.pair);
	}
	SECTION("del")
	{
		auto r = parse_args({"sim", "del", "ppsim0"});
		REQUIRE(r.parsed.options);
		CHECK(r.parsed.options->command == Command::SimDel);
		CHECK(r.parsed.options->ifname == "ppsim0");
	}
	SECTION("set, every knob")
	{
		auto r = parse_args({"sim", "set", "ppsim0", "--pool", "native", "--rx", "copy",
				     "--sync", "full", "--prefetch", "before-sync", "--cache", "fifo",
				     "--numa-rule", "off", "--frag", "on", "--irq-cpu", "3",
				     "--ring-size", "256"});
		REQUIRE(r.parsed.options);
		const auto &s = r.parsed.options->sim_set;
		CHECK(r.parsed.options->command == Command::SimSet);
		CHECK(r.parsed.options->ifname == "ppsim0");
		CHECK(s.pool == ppkit::SimPool::Native);
		CHECK(s.rx == ppkit::SimRx::Copy);
		CHECK(s.sync == ppkit::SimSync::Full);
		CHECK(s.prefetch == ppkit::SimPrefetch::BeforeSync);
		CHECK(s.cache == ppkit::SimCache::Fifo);
		CHECK(s.numa_rule == false);
		CHECK(s.frag == true);
		CHECK(s.irq_cpu == 3);
		CHECK(s.ring_size == 256u);
	}
	SECTION("set, one knob; irq-cpu auto is -1")
	{
		auto r = parse_args({"sim", "set", "ppsim0", "--irq-cpu", "auto"});
		REQUIRE(r.parsed.options);
		CHECK(r.parsed.options->sim_set.irq_cpu == -1);
		CHECK_FALSE(r.parsed.options->sim_set.pool);
		CHECK_FALSE(r.parsed.options->sim_set.ring_size);
	}
	SECTION("gen start and stop")
	{
		auto r = parse_args({"sim", "gen", "start", "ppsim0", "--rate", "0", "--size", "1514",
				     "--ethertype", "0x86dd", "--dst-port", "4789", "--count",
				     "10000000000", "--cpu", "1"});
		REQUIRE(r.parsed.options);
		const auto &g = r.parsed.options->gen;
		CHECK(r.parsed.options->command == Command::SimGenStart);
		CHECK(g.rate == 0u);
		CHECK(g.size == 1514u);
		CHECK(g.ethertype == 0x86dd);
		CHECK(g.dst_port == 4789);
		CHECK(g.count == 10'000'000'000ull);
		CHECK(g.cpu == 1);
		auto dec = parse_args({"sim", "gen", "start", "ppsim0", "--ethertype", "2048"});
		REQUIRE(dec.parsed.options);
		CHECK(dec.parsed.options->gen.ethertype == 0x0800);
		auto last = parse_args({"sim", "gen", "start", "ppsim0", "--cpu", "-1"});
		REQUIRE(last.parsed.options);
		CHECK(last.parsed.options->gen.cpu == -1);
		CHECK_FALSE(dec.parsed.options->gen.rate);
		CHECK_FALSE(dec.parsed.options->gen.cpu);
		auto s = parse_args({"sim", "gen", "stop", "ppsim0"});
		REQUIRE(s.parsed.options);
		CHECK(s.parsed.options->command == Command::SimGenStop);
	}
}

TEST_CASE("sim usage errors", "[cli][sim]")
{
	refused({"sim"}, "sim: a command is required: list, add, del, set or gen");
	refused({"sim", "gen"}, "sim gen: start or stop?");
	refused({"sim", "frob"}, "not expected: frob");
	refused({"sim", "del"}, "IFNAME is required");
	refused({"sim", "set", "--pool", "native"}, "IFNAME is required");
	refused({"sim", "gen", "start"}, "IFNAME is required");
	refused({"sim", "gen", "stop"}, "IFNAME is required");
	refused({"sim", "set", "ppsim0"}, "sim set: give at least one of --pool");
	refused({"sim", "set", "ppsim0", "--pool", "bogus"},
		"bad pool 'bogus': expected ppkit, native or none");
	refused({"sim", "set", "ppsim0", "--pool", "Native"}, "bad pool 'Native'");
	refused({"sim", "set", "ppsim0", "--rx", "zero-copy"},
		"bad rx mode 'zero-copy': expected zerocopy or copy");
	refused({"sim", "set", "ppsim0", "--sync", "partial"}, "expected precise or full");
	refused({"sim", "set", "ppsim0", "--prefetch", "after"},
		"expected after-sync or before-sync");
	refused({"sim", "set", "ppsim0", "--cache", "lru"}, "expected lifo or fifo");
	refused({"sim", "set", "ppsim0", "--numa-rule", "yes"}, "expected on or off");
	refused({"sim", "set", "ppsim0", "--irq-cpu", "x"}, "bad irq cpu 'x'");
	refused({"sim", "set", "ppsim0", "--irq-cpu", "40000"}, "bad irq cpu '40000'");
	refused({"sim", "gen", "start", "ppsim0", "--cpu", "-2"}, "cpu");
	refused({"sim", "set", "ppsim0", "--ring-size", "0"}, "bad ring size '0'");
	refused({"sim", "add", "--rx-queues", "0"}, "bad queue count '0'");
	refused({"sim", "add", "--pair", "ppsim0"}, "not expected");
	refused({"sim", "gen", "start", "ppsim0", "--ethertype", "0x"}, "bad ethertype '0x'");
	refused({"sim", "gen", "start", "ppsim0", "--ethertype", "0x10000"},
		"bad ethertype '0x10000': expected 0x0600..0xffff");
	refused({"sim", "gen", "start", "ppsim0", "--ethertype", "0x05ff"}, "bad ethertype");
	refused({"sim", "gen", "start", "ppsim0", "--ethertype", "ipv4"}, "bad ethertype 'ipv4'");
	refused({"sim", "gen", "start", "ppsim0", "--ethertype", "0x08zz"}, "bad ethertype");
	refused({"sim", "gen", "start", "ppsim0", "--size", "59"}, "bad frame size '59'");
	refused({"sim", "gen", "start", "ppsim0", "--dst-port", "65536"}, "bad port '65536'");
	refused({"sim", "gen", "start", "ppsim0", "--rate", "fast"}, "bad rate 'fast'");
	refused({"--source", "netdev", "sim", "list"}, "sim and xdp commands take no --source");
}

TEST_CASE("xdp commands and their options", "[cli][xdp]")
{
	auto a = parse_args({"xdp", "attach", "eth0"});
	REQUIRE(a.parsed.options);
	CHECK(a.parsed.options->command == Command::XdpAttach);
	CHECK(a.parsed.options->ifname == "eth0");
	CHECK(a.parsed.options->xdp_mode == ppkit::XdpMode::Native);
	CHECK(a.parsed.options->xdp_prog == "drop");
	CHECK_FALSE(a.parsed.options->xdp_force);
	for (const char *force : {"--force", "-f"}) {
		auto r = parse_args({"xdp", "attach", "eth0", "--prog", "pass", force});
		REQUIRE(r.parsed.options);
		CHECK(r.parsed.options->xdp_force);
	}

	auto g = parse_args({"xdp", "attach", "eth0", "--mode", "generic", "--prog", "tx"});
	REQUIRE(g.parsed.options);
	CHECK(g.parsed.options->xdp_mode == ppkit::XdpMode::Generic);
	CHECK(g.parsed.options->xdp_prog == "tx");

	auto f = parse_args({"xdp", "attach", "eth0", "--prog", PPKIT_XDP_OBJ});
	REQUIRE(f.parsed.options);
	CHECK(f.parsed.options->xdp_prog == PPKIT_XDP_OBJ);

	auto d = parse_args({"xdp", "detach", "eth0", "--mode", "generic"});
	REQUIRE(d.parsed.options);
	CHECK(d.parsed.options->command == Command::XdpDetach);
	CHECK(d.parsed.options->xdp_mode == ppkit::XdpMode::Generic);

	auto s = parse_args({"xdp", "status", "eth0", "--json"});
	REQUIRE(s.parsed.options);
	CHECK(s.parsed.options->command == Command::XdpStatus);
	CHECK(s.parsed.options->json);
}

TEST_CASE("xdp usage errors", "[cli][xdp]")
{
	refused({"xdp"}, "xdp: a command is required: attach, detach or status");
	refused({"xdp", "attach"}, "IFNAME is required");
	refused({"xdp", "detach", "--mode", "generic"}, "IFNAME is required");
	refused({"xdp", "status"}, "IFNAME is required");
	refused({"xdp", "attach", "eth0", "--mode", "skb"},
		"bad mode 'skb': expected native or generic");
	refused({"xdp", "attach", "eth0", "--mode", "offload"}, "bad mode 'offload'");
	refused({"xdp", "attach", "eth0", "--prog", "redirect"},
		"bad program 'redirect': expected drop, pass, tx or FILE.o");
	refused({"xdp", "attach", "eth0", "--prog", "/nonexistent/prog.o"},
		"cannot read XDP object file '/nonexistent/prog.o'");
}

TEST_CASE("sim and xdp help fit a screen", "[cli][sim][xdp]")
{
	for (std::vector<const char *> args :
	     {std::vector<const char *>{"sim", "--help"}, {"sim", "set", "--help"},
	      {"sim", "gen", "start", "--help"}, {"xdp", "--help"}, {"xdp", "attach", "--help"}}) {
		auto r = parse_args(args);
		CHECK(r.parsed.exit == kExitOk);
		CHECK(std::count(r.out.begin(), r.out.end(), '\n') <= 24);
	}
	CHECK_THAT(parse_args({"sim", "set", "--help"}).out,
		   Catch::Contains("--pool") && Catch::Contains("--numa-rule"));
}

TEST_CASE("an unknown interface is a usage error", "[cli][host][sim][xdp]")
{
	for (std::vector<const char *> args :
	     {std::vector<const char *>{"sim", "del", "ppkit-no-such-if0"},
	      {"sim", "set", "ppkit-no-such-if0", "--pool", "none"},
	      {"sim", "gen", "stop", "ppkit-no-such-if0"},
	      {"xdp", "status", "ppkit-no-such-if0"},
	      {"xdp", "attach", "ppkit-no-such-if0"}}) {
		auto r = run_args(args);
		CHECK(r.exit == kExitUsage);
		CHECK_THAT(r.err, Catch::Contains("no interface 'ppkit-no-such-if0'"));
	}
}

TEST_CASE("--version prints ppkit's version and exits 0", "[cli]")
{
	Result r = parse_args({"--version"});
	CHECK_FALSE(r.parsed.options);
	CHECK(r.parsed.exit == 0);
	CHECK(r.out == std::string(PPKIT_VERSION) + "\n");
}

TEST_CASE("errors: each kind has its exit status and message", "[cli]")
{
	auto report = [](std::exception_ptr e, std::string &msg, bool out_failed = false) {
		std::ostringstream out, err;
		if (out_failed)
			out.setstate(std::ios::badbit);
		int rc = -1;
		try {
			std::rethrow_exception(e);
		} catch (...) {
			rc = report_error(out, err);
		}
		msg = err.str();
		return rc;
	};
	std::string msg;
	CHECK(report(std::make_exception_ptr(UsageError("bad pool id 'x'")), msg) == kExitUsage);
	CHECK(msg == "ppctl: bad pool id 'x'\n");
	CHECK(report(std::make_exception_ptr(ppkit::Error(ppkit::Errc::Permission, "pool-set needs "
							  "CAP_NET_ADMIN: run it as root")),
		     msg) == kExitKernel);
	CHECK(msg == "ppctl: pool-set needs CAP_NET_ADMIN: run it as root\n");
	// A failed write of the output (the stream went bad) is not the
	// kernel's doing.
	CHECK(report(std::make_exception_ptr(std::ios_base::failure("basic_ios::clear")), msg,
		     true) == kExitOutput);
	CHECK(msg.starts_with("ppctl: cannot write the output"));
	// Nor is a bug of ppctl's own: it says so.
	CHECK(report(std::make_exception_ptr(std::logic_error("JsonWriter: a second top-level value")),
		     msg) == kExitInternal);
	CHECK(msg.starts_with("ppctl: internal error: JsonWriter: a second top-level value"));
	CHECK_THAT(msg, Catch::Contains("please report"));
	CHECK(report(std::make_exception_ptr(42), msg) == kExitInternal);
	CHECK(msg.starts_with("ppctl: internal error"));
	CHECK(kExitOutput != kExitKernel);
	CHECK(kExitInternal != kExitKernel);
}

TEST_CASE("run(): output that cannot be written is an error", "[cli]")
{
	// A stream that refuses every byte, as /dev/full does.
	struct Full : std::streambuf {
		int overflow(int) override { return traits_type::eof(); }
	} full;
	std::ostream out(&full);
	std::ostringstream err;
	std::vector<const char *> args{"ppctl", "--version"};
	CHECK(run(static_cast<int>(args.size()), args.data(), out, err) == kExitOutput);
	CHECK(err.str().starts_with("ppctl: cannot write the output"));
	// The stream is handed back as it came: no exceptions asked of it.
	CHECK(out.exceptions() == std::ios::goodbit);
}

TEST_CASE("ppctl adds its own advice to libppkit's errors", "[cli]")
{
	auto said = [](const ppkit::Error &e, std::vector<const char *> args) {
		args.insert(args.begin(), "ppctl");
		std::ostringstream out, err;
		Parsed p = parse(static_cast<int>(args.size()), args.data(), out, err);
		REQUIRE(p.options);
		ppkit::Error a = advised(e, *p.options);
		CHECK(a.code() == e.code());
		CHECK(a.sys_errno() == e.sys_errno());
		CHECK(a.extack() == e.extack());
		return std::string(a.what());
	};
	using ppkit::Source;
	CHECK(said(ppkit::kernel_error(-ENOENT, "no such pool", {Source::Ppkit, "pool-set", 42}),
		   {"set", "42", "--ring-size", "64"}) ==
	      "no pool 42 (see ppctl list); kernel: no such pool");
	CHECK(said(ppkit::kernel_error(-ENOENT, "", {Source::Netdev, "page-pool-get", 7}),
		   {"-s", "netdev", "stats", "7"}) == "no pool 7 (see ppctl list --source netdev)");
	CHECK_THAT(said(ppkit::family_missing(Source::Netdev), {"-s", "netdev", "list"}),
		   Catch::EndsWith("(it needs Linux >= 6.8 for page pools): use --source ppkit"));
	// Loading a module is not ppctl's to word: nothing added.
	CHECK(said(ppkit::family_missing(Source::Ppkit), {"list"}) ==
	      ppkit::family_missing(Source::Ppkit).what());
	CHECK_THAT(said(ppkit::sim_kernel_error(-ENODEV, "no ppsim device", "dev-set", 1),
			{"sim", "set", "lo", "--rx", "copy"}),
		   Catch::StartsWith("lo is not a ppsim device (see ppctl sim list); kernel:"));
	CHECK(said(ppkit::Error(ppkit::Errc::Kernel, "lo has a generic XDP program: detach it first",
				EEXIST),
		   {"xdp", "attach", "lo"}) ==
	      "lo has a generic XDP program: detach it first (ppctl xdp detach lo --mode generic)");
	CHECK(said(ppkit::Error(ppkit::Errc::Kernel,
				"lo already has a native XDP program, which is replaced only when "
				"asked to",
				EBUSY),
		   {"xdp", "attach", "lo"}) ==
	      "lo already has a native XDP program, which is replaced only when asked to: "
	      "detach it first (ppctl xdp detach lo --mode native), or replace it with --force");
	CHECK(said(ppkit::Error(ppkit::Errc::NotSupported, "lo has no native XDP", EOPNOTSUPP),
		   {"xdp", "attach", "lo"}) == "lo has no native XDP: try --mode generic");
	CHECK_THAT(said(ppkit::Error(ppkit::Errc::DaemonMissing,
				     "ppctld is not running (nothing listens on /x)"),
			{"history", "3"}),
		   Catch::EndsWith(": start it with 'systemctl start ppctld' or 'ppctld --foreground &'"));
}

TEST_CASE("list and stats: filters, --sort, --group-by", "[cli][select]")
{
	auto r = parse_args({"stats", "--group-by", "device", "--owner", "mvneta", "--state",
			     "detached", "--sort", "served", "--dev", "eth0"});
	REQUIRE(r.parsed.options);
	const Options &o = *r.parsed.options;
	CHECK(o.group_by_device);
	CHECK(o.filter.owner == "mvneta");
	CHECK(o.filter.detached == true);
	CHECK(o.pool_sort == SortKey::Served);
	CHECK(o.dev == "eth0");

	auto l = parse_args({"list", "-d", "lo", "--state", "live", "--sort", "inflight"});
	REQUIRE(l.parsed.options);
	CHECK(l.parsed.options->dev == "lo");
	CHECK(l.parsed.options->filter.detached == false);
	CHECK(l.parsed.options->pool_sort == SortKey::Inflight);
	CHECK_FALSE(l.parsed.options->filter.owner);
	// ynltool's and the words for the states.
	CHECK(parse_args({"list", "--state", "zombie"}).parsed.options->filter.detached == true);
	CHECK(parse_args({"list", "--state", "attached"}).parsed.options->filter.detached == false);
	// Defaults: every pool, by id, one line each.
	auto d = parse_args({"stats"});
	REQUIRE(d.parsed.options);
	CHECK(d.parsed.options->pool_sort == SortKey::Id);
	CHECK_FALSE(d.parsed.options->group_by_device);
	CHECK_FALSE(d.parsed.options->filter.any());
	CHECK_FALSE(parse_args({"stats", "-g", "pool"}).parsed.options->group_by_device);

	refused({"stats", "--group-by", "queue"}, "bad group 'queue': expected pool or device");
	refused({"stats", "--group-by", "device", "-i", "1"}, "takes no --interval or --long");
	refused({"stats", "--group-by", "device", "--long"}, "takes no --interval or --long");
	refused({"stats", "-g", "device", "--sort", "owner"}, "a device has no single owner");
	refused({"list", "--sort", "served"}, "expected id, dev, owner, state or inflight");
	refused({"stats", "--sort", "size"}, "expected id, dev, owner, state, inflight, served, hit or recycle");
	refused({"list", "--state", "gone"}, "bad state 'gone': expected live or detached");
}

TEST_CASE("-n NETNS: the name, and what it applies to", "[cli]")
{
	auto r = parse_args({"-n", "blue", "list"});
	REQUIRE(r.parsed.options);
	CHECK(r.parsed.options->netns == "blue");
	// Pools per namespace are the netdev family's: it is chosen for them.
	CHECK(r.parsed.options->source == SourceSel::Netdev);
	auto s = parse_args({"--netns", "blue", "sim", "list"});
	REQUIRE(s.parsed.options);
	CHECK(s.parsed.options->netns == "blue");
	// top's own -n is still its count.
	auto t = parse_args({"top", "-n", "3"});
	REQUIRE(t.parsed.options);
	CHECK(t.parsed.options->count == 3u);
	CHECK(t.parsed.options->netns.empty());

	refused({"-n", "a/b", "list"}, "bad network namespace name 'a/b'");
	refused({"-n", "..", "sim", "list"}, "bad network namespace name '..'");
	refused({"-n", "blue", "-s", "ppkit", "list"}, "use --source netdev");
	refused({"-n", "blue", "-s", "all", "stats"}, "use --source netdev");
	refused({"-n", "blue", "set", "1", "--ring-size", "64"}, "drop -n");
	refused({"-n", "blue", "holders"}, "drop -n");
	refused({"-n", "blue", "history", "1"}, "history and top take no -n");
	refused({"-n", "blue", "top"}, "history and top take no -n");
}

TEST_CASE("-n NETNS that does not exist: a usage error", "[cli][host]")
{
	auto r = run_args({"-n", "ppkit-no-such-netns", "list"});
	CHECK(r.exit == kExitUsage);
	CHECK_THAT(r.err, Catch::Contains("no network namespace 'ppkit-no-such-netns' (see ip netns list)"));
	auto j = run_args({"-j", "-n", "ppkit-no-such-netns", "list"});
	CHECK(j.exit == kExitUsage);
	CHECK_THAT(j.out, Catch::Contains("\"error\":\"no network namespace"));
}

TEST_CASE("-n NETNS enters the namespace, as ip -n does", "[cli][host][netns]")
{
	// Needs root and ip netns: the binary, in a child, so this process
	// stays in its own namespace.
	const char *ns = "ppkit-unit-netns";
	std::string add = std::string("ip netns add ") + ns + " 2>/dev/null";
	if (std::system(add.c_str()) != 0) {
		WARN("ip netns add failed (not root?): -n not exercised");
		return;
	}
	struct Del {
		std::string cmd;
		~Del() { (void)std::system(cmd.c_str()); }
	} del{std::string("ip netns del ") + ns};
	// A device of this namespace (lo is in every one): its ifindex is found
	// here; an interface only outside it is not, inside it.
	auto run = [](const std::string &args) {
		std::string cmd = std::string("'") + PPKIT_PPCTL_BIN + "' " + args + " >/dev/null 2>&1";
		int st = std::system(cmd.c_str());
		return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	};
	// (Not a usage error; exit 2 where the kernel has no netdev family.)
	CHECK(run(std::string("-n ") + ns + " list --dev lo") != kExitUsage);
	// The namespace has only lo: ifindex 2 is no interface there.
	std::string second = "ppkit-none";
	if (char name[IF_NAMESIZE]; if_indextoname(2, name))
		second = name;
	CHECK(run(std::string("-n ") + ns + " list --dev '" + second + "'") == kExitUsage);
	if (second != "ppkit-none")	// ... while it is one here
		CHECK(run(std::string("-s netdev list --dev '") + second + "'") != kExitUsage);
}
