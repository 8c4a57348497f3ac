// SPDX-License-Identifier: GPL-2.0
// What ppctl prints: tables for people, JSON for programs (the schema of
// Documentation/ppctl.rst: these tests pin its field names).
#include <catch2/catch.hpp>

#include <algorithm>
#include <iterator>
#include <set>
#include <sstream>

#include "format.h"
#include "render.h"
#include "text.h"

using namespace ppctl;
using namespace ppkit;
using nlohmann::json;

namespace {

using text::keys;

Pool pool(std::uint32_t id, std::uint64_t inflight = 8)
{
	Pool p;
	p.id = id;
	p.owner = "pp_poolgen";
	p.ifindex = 1;
	p.ifname = "lo";
	p.queue = id - 1;
	p.nid = -1;
	p.order = 0;
	p.ring_size = 1024;
	p.cache_size = 128;
	p.refill_batch = 64;
	p.inflight = inflight;
	p.created_ns = 1'000'000'000;
	return p;
}

Sample busy(std::uint32_t id)
{
	Sample s;
	s.pool = pool(id);
	s.stats.pool_id = id;
	for (std::size_t i = 0; i < kCounterCount; i++)
		s.stats.set(static_cast<Counter>(i), 0);
	s.stats.set(Counter::PagesFromCache, 8000);
	s.stats.set(Counter::PagesFromRing, 1000);
	s.stats.set(Counter::PagesFromAlloc, 1000);
	s.stats.set(Counter::RecycleCached, 9000);
	s.stats.set(Counter::RecycleRing, 500);
	s.stats.set(Counter::PagesReturned, 9992);
	s.stats.set(Counter::PagesAllocated, 1000);
	s.stats.set(Counter::PagesReleased, 492);
	s.stats.set(Counter::Inflight, 8);
	s.stats.set(Counter::CachePages, 300);
	s.stats.set(Counter::RingPages, 200);
	s.realtime_ns = 11'000'000'000;	// 10 s after creation
	return s;
}

using text::lines;

}  // namespace

TEST_CASE("the device cell", "[render]")
{
	Pool p;
	CHECK(dev_cell(p) == "-");
	p.ifindex = 7;
	CHECK(dev_cell(p) == "#7");
	p.ifname = "eth0";
	CHECK(dev_cell(p) == "eth0/7");
}

TEST_CASE("ppctl list: one aligned line per pool", "[render]")
{
	std::vector<Pool> pools = {pool(1), pool(2, 1234567)};
	pools[1].detach_time_ns = 5;
	pools[1].napi_id = 8193;
	auto l = lines(pools_table(pools, {false, 80, false}));
	REQUIRE(l.size() == 3);
	CHECK(l[0] == "ID  OWNER       DEV   QUEUE  NAPI   NODE  ORDER  RING  INFLIGHT  STATE");
	CHECK(l[1] == " 1  pp_poolgen  lo/1      0     -  local      0  1024         8  live");
	CHECK(l[2] == " 2  pp_poolgen  lo/1      1  8193  local      0  1024      1.2M  detached");
	CHECK_THAT(pools_table(pools, {true, 80, false}), Catch::Contains("1234567"));
	CHECK_THAT(pools_table(pools, {false, 80, true}), Catch::Contains("SRC") && Catch::Contains("ppkit"));
	for (const auto &x : lines(pools_table(pools, {false, 40, false}))) {
		CHECK(x.size() <= 40);
		CHECK_THAT(x, Catch::StartsWith(" 1") || Catch::StartsWith(" 2") ||
				      Catch::StartsWith("ID"));
	}
	// Piped (no width limit): every column, however many.
	CHECK(lines(pools_table(pools, {true, kNoWidthLimit, false}))[0] ==
	      "ID  OWNER       DEV   QUEUE  NAPI   NODE  ORDER  RING  INFLIGHT  STATE");
}

TEST_CASE("ppctl stats: counters and cumulative rates", "[render]")
{
	auto out = stats_table({busy(1)}, {false, 120, false});
	auto l = lines(out);
	REQUIRE(l.size() == 2);
	CHECK_THAT(l[0], Catch::StartsWith("ID  DEV   Q  SERVED    HIT  RECYCLE"));
	CHECK_THAT(l[1], Catch::Contains("10K") && Catch::Contains("90.0%") &&
				 Catch::Contains("95.1%") && Catch::Contains("live"));
	// 80 columns: the least useful columns go, the rates stay.
	for (const auto &x : lines(stats_table({busy(1)}, {false, 80, false}))) {
		CHECK(x.size() <= 80);
	}
	CHECK_THAT(stats_table({busy(1)}, {false, 60, false}), Catch::Contains("RECYCLE"));
	// Piped: no column left out, exact numbers (layout_for()).
	{
		Layout piped = layout_for(false, 0, false, false);
		auto p = lines(stats_table({busy(1)}, {piped.raw, piped.width, false}));
		std::istringstream h(p[0]);
		std::vector<std::string> titles{std::istream_iterator<std::string>(h), {}};
		CHECK(titles == std::vector<std::string>{"ID", "DEV", "Q", "SERVED", "HIT", "RECYCLE",
							 "ALLOCATED", "RELEASED", "ORPHANED", "LENT",
							 "INFLIGHT", "CACHE", "RING", "STATE"});
		CHECK_THAT(p[1], Catch::Contains("10000") && !Catch::Contains("10K"));
	}

	Sample bare;	// a pool whose family has no page counters
	bare.pool = pool(3);
	bare.pool.source = Source::Netdev;
	bare.stats.set(Counter::AllocFast, 5);
	auto b = lines(stats_table({bare}, {false, 120, false}));
	CHECK_THAT(b[1], Catch::Contains("  -  "));
}

TEST_CASE("ppctl stats --long: every counter by name", "[render]")
{
	auto out = stats_long({busy(4)}, {true, 100, false});
	CHECK_THAT(out, Catch::StartsWith("pool 4  owner pp_poolgen  dev lo/1  queue 3  live\n"));
	for (std::size_t i = 0; i < kCounterCount; i++)
		CHECK_THAT(out, Catch::Contains(std::string(name(static_cast<Counter>(i)))));
	CHECK_THAT(out, Catch::Contains("hit rate 90.0%  recycle rate 95.1%  (over 10.0s since creation)"));
	for (const auto &x : lines(out))
		CHECK(x.size() <= 100);
	Sample none;
	none.pool = pool(5);
	CHECK_THAT(stats_long({none}, {}), Catch::Contains("(no statistics)"));
}

TEST_CASE("ppctl stats --interval: vmstat-like lines", "[render]")
{
	Sample a = busy(1), b = busy(1);
	b.stats.set(Counter::PagesFromCache, 8000 + 900);
	b.stats.set(Counter::PagesFromAlloc, 1000 + 100);
	b.stats.set(Counter::RecycleCached, 9000 + 1000);
	b.stats.set(Counter::PagesReturned, 9992 + 1000);
	b.taken = a.taken + std::chrono::seconds(1);
	std::vector<IntervalRow> rows = {{b, window(a, b)}};
	IntervalLayout layout;
	auto l = lines(interval_lines(rows, {false, 100, false}, layout));
	REQUIRE(l.size() == 2);
	CHECK_THAT(l[0], Catch::StartsWith("   ID  DEV       SERVED/s     HIT  RECYCLE"));
	CHECK_THAT(l[1], Catch::Contains("1.0K") && Catch::Contains("90.0%") &&
				 Catch::Contains("100.0%"));
	// Later intervals: no header, same columns.
	auto again = lines(interval_lines(rows, {false, 100, false}, layout));
	REQUIRE(again.size() == 1);
	CHECK(again[0] == l[1]);

	Sample r = busy(1);
	r.stats.set(Counter::PagesFromCache, 1);	// went down
	std::vector<IntervalRow> reset = {{r, window(a, r)}};
	CHECK_THAT(interval_lines(reset, {false, 100, false}, layout), Catch::Contains("reset"));
}

TEST_CASE("ppctl stats --interval: columns stay under their header", "[render]")
{
	// an interval whose device name and in-flight count are wider than
	// the first's: the header comes again, and every line after it,
	// narrower figures too, keeps the wider columns
	auto interval = [](const std::string &dev, std::uint64_t inflight) {
		Sample a = busy(1), b = busy(1);
		b.pool.ifname = dev;
		b.stats.set(Counter::Inflight, inflight);
		b.stats.set(Counter::PagesFromCache, 8000 + 900);
		b.stats.set(Counter::PagesFromAlloc, 1000 + 100);
		b.taken = a.taken + std::chrono::seconds(1);
		return std::vector<IntervalRow>{{b, window(a, b)}};
	};
	const RenderOptions o{true, 200, false};
	IntervalLayout layout;
	std::vector<std::string> out;
	for (auto [dev, inflight] : {std::pair{"eth0", 12}, {"eth0", 40}, {"enp1s0f0np0", 1234567890},
				     {"eth0", 12}})
		for (auto &l : lines(interval_lines(interval(dev, inflight), o, layout)))
			out.push_back(l);
	REQUIRE(out.size() == 6);	// header, line, line, header, line, line
	CHECK_THAT(out[0], Catch::StartsWith("   ID"));
	CHECK_THAT(out[3], Catch::StartsWith("   ID"));
	// each in-flight figure ends where its header's INFLIGHT does
	auto under = [](const std::string &header, const std::string &line, const std::string &fig) {
		std::size_t end = header.find("INFLIGHT") + 8;
		return end <= line.size() && end > fig.size() &&
		       line.compare(end - fig.size(), fig.size(), fig) == 0 &&
		       line[end - fig.size() - 1] == ' ';
	};
	CHECK(under(out[0], out[1], "12"));
	CHECK(under(out[0], out[2], "40"));
	CHECK(under(out[3], out[4], "1234567890"));
	CHECK(under(out[3], out[5], "12"));
	CHECK(out[3].find("INFLIGHT") > out[0].find("INFLIGHT"));	// the device column grew
}

TEST_CASE("ppctl monitor: one line per event", "[render]")
{
	Event e;
	e.kind = Event::Kind::Add;
	e.pool = pool(5);
	e.realtime_ns = 1'700'000'000'123'000'000;
	auto l = event_line(e, {});
	CHECK_THAT(l, Catch::Contains(" add    pool 5 owner pp_poolgen dev lo/1 queue 4 ring 1024 "
				      "batch 64 inflight 8 live\n"));
	CHECK_THAT(l, Catch::Contains(".123 "));
	CHECK(std::count(l.begin(), l.end(), '\n') == 1);
}

TEST_CASE("JSON: pool fields", "[render][json]")
{
	json j = pool_json(pool(2));
	CHECK(keys(j) == std::set<std::string>{
				 "id", "source", "owner", "ifindex", "ifname", "queue", "napi_id",
				 "nid", "order", "ring_size", "cache_size", "refill_batch", "max_len",
				 "dma_dir", "inflight", "inflight_mem", "created_ns",
				 "detach_time_ns", "state"});
	CHECK(j["id"] == 2);
	CHECK(j["source"] == "ppkit");
	CHECK(j["ifname"] == "lo");
	CHECK(j["nid"] == -1);
	CHECK(j["napi_id"].is_null());
	CHECK(j["dma_dir"].is_null());
	CHECK(j["state"] == "live");
	Pool anon;
	CHECK(pool_json(anon)["owner"].is_null());
}

TEST_CASE("JSON: list and stats documents", "[render][json]")
{
	json l = list_doc({pool(1), pool(2)});
	CHECK(l["version"] == kJsonVersion);
	CHECK(l["command"] == "list");
	CHECK(l["pools"].size() == 2);

	json s = stats_doc({busy(1)}, {{Source::Ppkit, true}}, 42);
	CHECK(keys(s) == std::set<std::string>{"version", "command", "time_ns", "sources", "pools"});
	CHECK(s["sources"]["ppkit"]["stats"] == true);
	const json &p = s["pools"][0];
	CHECK(p["id"] == 1);
	CHECK(p["counters"].size() == 30);
	ppkit::Stats plain = busy(1).stats;
	plain.present.reset(ppkit::index(Counter::FragsServed));
	plain.present.reset(ppkit::index(Counter::FragsLent));
	plain.present.reset(ppkit::index(Counter::FragPagesUnlent));
	CHECK(counters_json(plain).size() == 27);	// no fragments: no such keys
	CHECK(p["counters"]["pages_from_cache"] == 8000);
	CHECK(p["gauges"].size() == 7);
	CHECK(p["gauges"]["inflight"] == 8);
	CHECK(p["gauges"].contains("lent_held"));
	CHECK(p["gauges"].contains("lent_oldest_ms"));
	CHECK(p["derived"]["served"] == 10000);
	CHECK(p["derived"]["left_driver"] == 9992);
	CHECK(p["rates"]["hit"].get<double>() == Approx(0.9));
	CHECK(p["rates"]["recycle"].get<double>() == Approx(9500.0 / 9992.0));
	CHECK(p["rates"]["seconds"].get<double>() == Approx(10.0));
	// Round trip through text, as a consumer reads it.
	CHECK(json::parse(s.dump()) == s);

	Sample bare;
	bare.pool = pool(3);
	bare.pool.source = Source::Netdev;
	json n = stats_doc({bare}, {{Source::Netdev, false}}, 42);
	CHECK(n["sources"]["netdev"]["stats"] == false);
	CHECK(n["pools"][0]["counters"]["alloc_fast"].is_null());
	CHECK(n["pools"][0]["rates"]["hit"].is_null());
}

TEST_CASE("JSON: interval, event and set documents", "[render][json]")
{
	Sample a = busy(1), b = busy(1);
	b.stats.set(Counter::PagesFromAlloc, 1100);
	b.stats.set(Counter::PagesReturned, 10092);
	b.taken = a.taken + std::chrono::milliseconds(500);
	json d = interval_doc({{b, window(a, b)}}, 3, 0.5, 99);
	CHECK(d["version"] == kJsonVersion);
	CHECK(d["interval"]["seq"] == 3);
	CHECK(d["interval"]["seconds"] == 0.5);
	const json &p = d["pools"][0];
	CHECK(p["reset"] == false);
	CHECK(p["delta"]["pages_from_alloc"] == 100);
	CHECK(p["delta"]["pages_from_cache"] == 0);
	CHECK(p["per_second"]["served"].get<double>() == Approx(200.0));
	CHECK(p["rates"]["hit"] == 0.0);
	CHECK(p["rates"]["recycle"] == 0.0);
	CHECK(p["gauges"]["ring_pages"] == 200);

	Sample r = busy(1);
	r.stats.set(Counter::PagesAllocated, 1);
	json rd = interval_doc({{r, window(a, r)}}, 4, 0.5, 99);
	CHECK(rd["pools"][0]["reset"] == true);
	CHECK(rd["pools"][0]["delta"]["pages_allocated"].is_null());
	CHECK(rd["pools"][0]["rates"]["hit"].is_null());

	Event e;
	e.kind = Event::Kind::Del;
	e.pool = pool(9);
	json ev = event_doc(e);
	CHECK(ev["event"] == "del");
	CHECK(ev["pool"]["id"] == 9);
	CHECK(ev.dump().find('\n') == std::string::npos);	// one object per line

	json lost = lost_doc(Source::Netdev, 77);
	CHECK(keys(lost) == std::set<std::string>{"command", "event", "source", "time_ns", "version"});
	CHECK(lost["command"] == "monitor");
	CHECK(lost["event"] == "lost");
	CHECK(lost["source"] == "netdev");
	CHECK(lost["time_ns"] == 77);

	json st = set_doc(pool(2));
	CHECK(st["command"] == "set");
	CHECK(st["pool"]["ring_size"] == 1024);
}

TEST_CASE("monitor: lost events are a JSON record on stdout", "[render][json]")
{
	Event a, b;
	a.kind = Event::Kind::Add;
	a.pool = pool(1);
	b.kind = Event::Kind::Del;
	b.pool = pool(2);
	RenderOptions ro;
	// --json: the events, then the "lost" record, one object per line.
	std::string j = monitor_output({a, b}, 10, true, Source::Ppkit, true, ro, 5);
	std::istringstream in(j);
	std::vector<json> docs;
	for (std::string l; std::getline(in, l);)
		docs.push_back(json::parse(l));
	REQUIRE(docs.size() == 3);
	CHECK(docs[0]["event"] == "add");
	CHECK(docs[1]["event"] == "del");
	CHECK(docs[2] == lost_doc(Source::Ppkit, 5));
	// Nothing lost: no record; --count's limit cuts events, not the record.
	CHECK(monitor_output({a, b}, 10, false, Source::Ppkit, true, ro, 5).find("lost") ==
	      std::string::npos);
	std::string cut = monitor_output({a, b}, 1, true, Source::Ppkit, true, ro, 5);
	CHECK(std::count(cut.begin(), cut.end(), '\n') == 2);
	CHECK_THAT(cut, Catch::Contains("\"event\":\"lost\""));
	// Tables: the note goes to stderr (cmd_monitor), stdout has the lines.
	std::string t = monitor_output({a, b}, 10, true, Source::Ppkit, false, ro, 5);
	CHECK(std::count(t.begin(), t.end(), '\n') == 2);
	CHECK(t.find("lost") == std::string::npos);
}

TEST_CASE("JSON: documents are written as one line, pool by pool", "[render][json]")
{
	std::vector<std::pair<Source, bool>> src = {{Source::Ppkit, true}};
	std::ostringstream e;
	write_stats_doc(e, {}, src, 7);
	json ej = json::parse(e.str());
	CHECK(ej["pools"].empty());
	CHECK(ej["time_ns"] == 7);
	std::ostringstream n;
	write_list_doc(n, {});
	CHECK(json::parse(n.str()) == json::parse(R"({"version":1,"command":"list","pools":[]})"));

	// A thousand pools: more than one chunk (64 KiB) of output, still one
	// document on one line, every pool in order.
	std::vector<Sample> samples;
	for (std::uint32_t id = 1; id <= 1000; id++)
		samples.push_back(busy(id));
	std::ostringstream a;
	write_stats_doc(a, samples, src, 7);
	const std::string out = a.str();
	CHECK(out.size() > 512 * 1024);
	CHECK(out.find('\n') == out.size() - 1);
	json d = json::parse(out);
	REQUIRE(d["pools"].size() == 1000);
	CHECK(d["pools"][999]["id"] == 1000);
	CHECK(d["pools"][500] == stats_json(samples[500]));
	// Keys sorted, numbers as nlohmann writes them: the text is what
	// dumping the document gives, byte for byte (Documentation/ppctl.rst).
	CHECK(d.dump() + "\n" == out);

	std::vector<Pool> pools = {pool(1), pool(2)};
	pools[1].dma_dir = 2;
	pools[1].owner.clear();
	std::ostringstream l;
	write_list_doc(l, pools);
	CHECK(json::parse(l.str()).dump() + "\n" == l.str());

	Sample x = busy(1), y = busy(1);
	y.stats.set(Counter::PagesFromAlloc, 1100);
	y.taken = x.taken + std::chrono::milliseconds(500);
	std::ostringstream iv;
	write_interval_doc(iv, {{y, window(x, y)}}, 3, 0.5, 99);
	CHECK(json::parse(iv.str()).dump() + "\n" == iv.str());
	CHECK(iv.str().find('\n') == iv.str().size() - 1);
}

TEST_CASE("JSON: an interface name that is not UTF-8", "[render][json]")
{
	// root can name an interface with any bytes: the document stays valid.
	Pool p = pool(1);
	p.ifname = "et\xffh\xc3";
	std::ostringstream l;
	REQUIRE_NOTHROW(write_list_doc(l, {p}));
	json d = json::parse(l.str());
	CHECK(d["pools"][0]["ifname"] == "et\xef\xbf\xbdh\xef\xbf\xbd");
}
