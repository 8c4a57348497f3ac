// SPDX-License-Identifier: GPL-2.0
// What ppctl sim and ppctl xdp print: tables for people, JSON for programs
// (the schema of Documentation/ppctl.rst: these tests pin its field names).
#include <catch2/catch.hpp>

#include <set>

#include "render_sim.h"
#include "text.h"

using namespace ppctl;
using namespace ppkit;
using nlohmann::json;
using text::lines;

namespace {

using text::keys;

SimDevice port(std::uint32_t ifindex, std::uint32_t peer)
{
	SimDevice d;
	d.ifindex = ifindex;
	d.ifname = "ppsim" + std::to_string(ifindex - 5);
	d.peer_ifindex = peer;
	d.peer_ifname = "ppsim" + std::to_string(peer - 5);
	d.rx_queues = 4;
	d.tx_queues = 4;
	d.ring_size = 1024;
	d.pool = SimPool::Ppkit;
	d.rx = SimRx::Zerocopy;
	d.sync = SimSync::Precise;
	d.prefetch = SimPrefetch::AfterSync;
	d.cache = SimCache::Lifo;
	d.numa_rule = true;
	d.frag = false;
	d.irq_cpu = -1;
	d.gen.running = false;
	d.gen.rate = 0;
	d.gen.sent = 0;
	d.gen.missed = 0;
	return d;
}

SimDevice busy()
{
	SimDevice d = port(5, 6);
	d.pool = SimPool::Native;
	d.rx = SimRx::Copy;
	d.cache = SimCache::Fifo;
	d.numa_rule = false;
	d.frag = true;
	d.irq_cpu = 2;
	d.xdp_prog_id = 42;
	d.gen.running = true;
	d.gen.rate = 2'000'000;
	d.gen.size = 60;
	d.gen.ethertype = 0x0800;
	d.gen.dst_port = 9;
	d.gen.count = 0;
	d.gen.cpu = -1;
	d.gen.sent = 123'456'789;
	d.gen.missed = 1234;
	return d;
}

}  // namespace

TEST_CASE("ppctl sim list: one aligned line per device", "[render][sim]")
{
	SimDevice bare;	// a reply with nothing but the ifindex
	bare.ifindex = 9;
	std::vector<SimDevice> devs = {busy(), port(6, 5), bare};
	auto l = lines(sim_table(devs, {false, 200, false}));
	REQUIRE(l.size() == 4);
	CHECK(l[0] == "DEV     IFINDEX  PEER    QUEUES  RING  POOL    RX        SYNC     PREFETCH    "
		      "CACHE  NUMA  FRAG   IRQ  XDP  GEN  RATE  SENT  MISSED");
	CHECK(l[1] == "ppsim0        5  ppsim1     4/4  1024  native  copy      precise  after-sync  "
		      "fifo   off   on       2   42  on   2.0M  123M    1.2K");
	CHECK(l[2] == "ppsim1        6  ppsim0     4/4  1024  ppkit   zerocopy  precise  after-sync  "
		      "lifo   on    off   auto    -  off  line     0       0");
	CHECK(l[3] == "#9            9  -            -     -  -       -         -        -           "
		      "-      -     -        -    -  -       -     -       -");
	CHECK_THAT(sim_table(devs, {true, 200, false}), Catch::Contains("123456789"));

	// 80 columns: the device, its pool and its generator stay.
	auto narrow = lines(sim_table(devs, {false, 80, false}));
	for (const auto &x : narrow)
		CHECK(x.size() <= 80);
	CHECK_THAT(narrow[0], Catch::StartsWith("DEV") && Catch::Contains("POOL") &&
				      Catch::Contains("GEN"));
}

TEST_CASE("ppctl sim set and gen: one line each", "[render][sim]")
{
	CHECK(sim_settings_line(busy()) ==
	      "ppsim0: pool native, rx copy, sync precise, prefetch after-sync, cache fifo, "
	      "numa-rule off, frag on, irq-cpu 2, ring 1024\n");
	CHECK(gen_line(busy(), false) ==
	      "ppsim0: generator running, rate 2.0M, 60 bytes, ethertype 0x0800, dst-port 9, "
	      "until stopped, last cpu; sent 123M, missed 1.2K\n");
	CHECK(gen_line(port(6, 5), true) == "ppsim1: generator stopped; sent 0, missed 0\n");
}

TEST_CASE("ppctl xdp status: a line per program", "[render][xdp]")
{
	XdpStatus st;
	st.ifindex = 5;
	st.ifname = "ppsim0";
	CHECK(xdp_status_text(st) == "ppsim0: no XDP program\n");
	st.programs.push_back({XdpMode::Native, 42, "xdp_drop"});
	CHECK(xdp_status_text(st) == "ppsim0: native xdp_drop (id 42)\n");
	st.programs.push_back({XdpMode::Generic, 43, ""});	// name unreadable without CAP_SYS_ADMIN
	CHECK(xdp_status_text(st) == "ppsim0: native xdp_drop (id 42)\nppsim0: generic ? (id 43)\n");
}

TEST_CASE("JSON: ppsim device fields", "[render][json][sim]")
{
	json j = sim_device_json(busy());
	CHECK(keys(j) == std::set<std::string>{
				 "ifindex", "ifname", "peer_ifindex", "peer_ifname", "rx_queues",
				 "tx_queues", "ring_size", "pool", "rx", "sync", "prefetch", "cache",
				 "numa_rule", "frag", "irq_cpu", "xdp_prog_id", "gen"});
	CHECK(keys(j["gen"]) == std::set<std::string>{"running", "rate", "size", "ethertype",
						      "dst_port", "count", "cpu", "sent",
						      "missed"});
	CHECK(j["ifname"] == "ppsim0");
	CHECK(j["peer_ifindex"] == 6);
	CHECK(j["pool"] == "native");
	CHECK(j["rx"] == "copy");
	CHECK(j["prefetch"] == "after-sync");
	CHECK(j["numa_rule"] == false);
	CHECK(j["irq_cpu"] == 2);
	CHECK(j["xdp_prog_id"] == 42);
	CHECK(j["gen"]["running"] == true);
	CHECK(j["gen"]["rate"] == 2'000'000);
	CHECK(j["gen"]["ethertype"] == 2048);
	CHECK(j["gen"]["cpu"] == -1);
	CHECK(j["gen"]["sent"] == 123'456'789);

	SimDevice bare;
	bare.ifindex = 9;
	json b = sim_device_json(bare);
	CHECK(b["ifindex"] == 9);
	for (const char *k : {"ifname", "peer_ifindex", "peer_ifname", "pool", "numa_rule",
			      "irq_cpu", "xdp_prog_id"})
		CHECK(b[k].is_null());
	CHECK(b["gen"]["running"].is_null());
}

TEST_CASE("JSON: sim and xdp documents", "[render][json][sim][xdp]")
{
	json l = sim_devices_doc("sim-list", {busy(), port(6, 5)});
	CHECK(keys(l) == std::set<std::string>{"version", "command", "devices"});
	CHECK(l["version"] == kJsonVersion);
	CHECK(l["command"] == "sim-list");
	REQUIRE(l["devices"].size() == 2);
	CHECK(l["devices"][1]["peer_ifname"] == "ppsim0");
	CHECK(json::parse(l.dump()) == l);
	CHECK(sim_devices_doc("sim-list", {}).dump() ==
	      "{\"command\":\"sim-list\",\"devices\":[],\"version\":1}");

	json s = sim_device_doc("sim-set", busy());
	CHECK(keys(s) == std::set<std::string>{"version", "command", "device"});
	CHECK(s["device"]["cache"] == "fifo");

	XdpStatus st;
	st.ifindex = 5;
	st.ifname = "ppsim0";
	json none = xdp_status_doc("xdp-status", st);
	CHECK(keys(none) == std::set<std::string>{"version", "command", "ifindex", "ifname",
						  "attached", "mode", "prog_id", "prog_name",
						  "programs"});
	CHECK(none["attached"] == false);
	CHECK(none["mode"] == "none");
	CHECK(none["prog_id"].is_null());
	CHECK(none["programs"].empty());

	st.programs.push_back({XdpMode::Native, 42, "xdp_tx"});
	json one = xdp_status_doc("xdp-status", st);
	CHECK(one["attached"] == true);
	CHECK(one["mode"] == "native");
	CHECK(one["prog_id"] == 42);
	CHECK(one["prog_name"] == "xdp_tx");
	CHECK(one["programs"][0] == json{{"mode", "native"}, {"prog_id", 42}, {"prog_name", "xdp_tx"}});

	st.programs.push_back({XdpMode::Generic, 43, ""});
	json multi = xdp_status_doc("xdp-status", st);
	CHECK(multi["mode"] == "multi");
	CHECK(multi["prog_id"].is_null());
	CHECK(multi["programs"][1]["prog_name"].is_null());
	CHECK(multi.dump().find('\n') == std::string::npos);
}

TEST_CASE("JSON: device names that are not UTF-8", "[render][json][sim][xdp]")
{
	// root can name an interface with any bytes: dump() must not throw.
	SimDevice d = port(5, 6);
	d.ifname = "sim\xff\xfe";
	d.peer_ifname = "\xc3";
	json l = sim_devices_doc("sim-list", {d});
	std::string text;
	REQUIRE_NOTHROW(text = l.dump());
	json back = json::parse(text);
	CHECK(back["devices"][0]["ifname"] == "sim\xef\xbf\xbd\xef\xbf\xbd");
	CHECK(back["devices"][0]["peer_ifname"] == "\xef\xbf\xbd");

	XdpStatus st;
	st.ifindex = 5;
	st.ifname = "x\xff";
	st.programs.push_back({XdpMode::Native, 42, "prog\xfe"});
	json x = xdp_status_doc("xdp-status", st);
	REQUIRE_NOTHROW(text = x.dump());
	CHECK(json::parse(text)["ifname"] == "x\xef\xbf\xbd");
	CHECK(json::parse(text)["prog_name"] == "prog\xef\xbf\xbd");
}
