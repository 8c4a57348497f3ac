// SPDX-License-Identifier: GPL-2.0
// ppctl history and ppctl top: their command lines, what they print from
// ppctld's replies (the API of Documentation/ppctld.rst), and how they fail
// when no daemon runs.
#include <catch2/catch.hpp>

#include <sstream>

#include "cli.h"
#include "daemon_view.h"
#include "ppkit/error.h"

using namespace ppctl;
using nlohmann::json;

namespace {

Parsed parse_args(std::vector<const char *> args, std::string *err_out = nullptr)
{
	args.insert(args.begin(), "ppctl");
	std::ostringstream out, err;
	Parsed p = parse(static_cast<int>(args.size()), args.data(), out, err);
	if (err_out)
		*err_out = err.str();
	return p;
}

json row(std::uint32_t id, json alloc, json hit, std::vector<std::string> alerts = {})
{
	return {{"id", id},	    {"source", "ppkit"}, {"owner", "ppsim"}, {"ifindex", 2},
		{"ifname", "sim0"}, {"queue", id - 1},	 {"napi_id", nullptr}, {"state", "live"},
		{"time_ns", 1},	    {"inflight", 100 * id}, {"served_per_s", alloc},
		{"released_per_s", 0.0}, {"hit", hit}, {"recycle", 1.0}, {"alerts", alerts},
		{"counters", json::object()}};
}

}  // namespace

TEST_CASE("history and top on the command line", "[cli][daemon]")
{
	Parsed h = parse_args({"history", "7", "--since", "10m", "--socket", "/tmp/s"});
	REQUIRE(h.options);
	CHECK(h.options->command == Command::History);
	CHECK(h.options->pool == 7);
	CHECK(h.options->since == 600);
	CHECK(h.options->socket == "/tmp/s");
	CHECK(h.options->socket_given);

	Parsed d = parse_args({"history", "7"});
	REQUIRE(d.options);
	CHECK_FALSE(d.options->since);
	CHECK(d.options->socket == "/run/ppctld/ppctld.sock");

	Parsed t = parse_args({"top", "-n", "3", "-i", "0.5", "--sort", "hit"});
	REQUIRE(t.options);
	CHECK(t.options->command == Command::Top);
	CHECK(t.options->count == 3);
	CHECK(t.options->interval == 0.5);
	CHECK(t.options->sort == TopSort::Hit);

	std::string err;
	CHECK_FALSE(parse_args({"history"}, &err).options);
	CHECK_FALSE(parse_args({"history", "0"}, &err).options);
	CHECK_FALSE(parse_args({"history", "3", "--since", "5x"}, &err).options);
	CHECK_THAT(err, Catch::Contains("expected a duration"));
	CHECK_FALSE(parse_args({"-s", "all", "history", "3"}, &err).options);
	CHECK_THAT(err, Catch::Contains("pool ids are per source"));
	CHECK_FALSE(parse_args({"top", "--sort", "size"}, &err).options);
	CHECK_THAT(err, Catch::Contains("served, hit, recycle, inflight or id"));
	// "alloc", the old name of "served", is still accepted (deprecated).
	Parsed old = parse_args({"top", "--sort", "alloc"});
	REQUIRE(old.options);
	CHECK(old.options->sort == TopSort::Served);
	Parsed dflt = parse_args({"top"});
	REQUIRE(dflt.options);
	CHECK(dflt.options->sort == TopSort::Served);
	Parsed served = parse_args({"top", "--sort", "served"});
	REQUIRE(served.options);
	CHECK(served.options->sort == TopSort::Served);
	CHECK_FALSE(parse_args({"top", "-i", "0"}, &err).options);
}

TEST_CASE("ppctl history without ppctld: exit 2 and how to start it", "[cli][daemon]")
{
	std::vector<const char *> args = {"ppctl", "history", "3", "--socket",
					  "/nonexistent/ppctld.sock"};
	std::ostringstream out, err;
	int rc = run(static_cast<int>(args.size()), args.data(), out, err);
	CHECK(rc == kExitKernel);
	CHECK_THAT(err.str(), Catch::Contains("ppctld is not running") &&
				      Catch::Contains("systemctl start ppctld"));
}

TEST_CASE("top rows from ppctld's pools reply", "[daemon]")
{
	TopRow r = top_row(row(3, 1500.0, 0.25, {"low-hit-rate"}));
	CHECK(r.pool.id == 3);
	CHECK(r.pool.ifname == "sim0");
	CHECK(r.pool.queue == 2u);
	CHECK(r.inflight == 300u);
	CHECK(r.served_per_s == 1500.0);
	CHECK(r.hit == 0.25);
	CHECK(r.alerts == std::vector<std::string>{"low-hit-rate"});

	TopRow n = top_row(row(4, nullptr, nullptr));
	CHECK_FALSE(n.served_per_s);
	CHECK_FALSE(n.hit);

	// A ppctld older than the name sends only "alloc_per_s".
	json old = row(6, nullptr, 1.0);
	old.erase("served_per_s");
	old["alloc_per_s"] = 700.0;
	CHECK(top_row(old).served_per_s == 700.0);

	CHECK_THROWS_AS(top_row(json::array()), ppkit::Error);
	json bad = row(5, "fast", 1.0);
	CHECK_THROWS_AS(top_row(bad), ppkit::Error);
}

TEST_CASE("top sorts by pages served, pools without a rate last", "[daemon]")
{
	std::vector<TopRow> rows = {top_row(row(1, 10.0, 1.0)), top_row(row(2, nullptr, nullptr)),
				    top_row(row(3, 900.0, 0.5)), top_row(row(4, 50.0, 0.9))};
	sort_rows(rows, TopSort::Served);
	CHECK(rows[0].pool.id == 3);
	CHECK(rows[1].pool.id == 4);
	CHECK(rows[2].pool.id == 1);
	CHECK(rows[3].pool.id == 2);
	sort_rows(rows, TopSort::Hit);
	CHECK(rows[0].pool.id == 1);
	CHECK(rows[3].pool.id == 2);
	sort_rows(rows, TopSort::Id);
	CHECK(rows[0].pool.id == 1);
	CHECK(rows[3].pool.id == 4);
}

TEST_CASE("a top screen: summary, titles, as many pools as fit", "[daemon]")
{
	std::vector<TopRow> rows;
	for (std::uint32_t i = 1; i <= 10; i++)
		rows.push_back(top_row(row(i, 100.0 * i, 1.0, i == 2 ? std::vector<std::string>{"leak-suspect"}
								       : std::vector<std::string>{})));
	TopHeader h{1'000'000'000, 1.0, "ppctld"};
	RenderOptions o{false, 100, false};
	std::string all = top_screen(rows, h, o, 0);
	CHECK_THAT(all, Catch::Contains("10 pools, 1 alerting") && Catch::Contains("from ppctld"));
	CHECK_THAT(all, Catch::Contains("served 5.5K/s"));
	CHECK_THAT(all, Catch::Contains("SERVED/s") && Catch::Contains("ALERTS"));
	CHECK_THAT(all, Catch::Contains("leak-suspect"));
	std::size_t lines = static_cast<std::size_t>(std::count(all.begin(), all.end(), '\n'));
	CHECK(lines == 13);	// two summary lines, titles, ten pools
	std::string fit = top_screen(rows, h, o, 8);
	CHECK(std::count(fit.begin(), fit.end(), '\n') == 8);	// five pools fit
	// A narrow terminal keeps the alerts.
	RenderOptions narrow{false, 60, false};
	CHECK_THAT(top_screen(rows, h, narrow, 0), Catch::Contains("leak-suspect"));

	json doc = top_doc(rows, h);
	CHECK(doc["version"] == 1);
	CHECK(doc["from"] == "ppctld");
	CHECK(doc["pools"].size() == 10);
	CHECK(doc["pools"][1]["alerts"][0] == "leak-suspect");
	CHECK(doc["pools"][1]["served_per_s"] == 200.0);
	CHECK(doc["pools"][1]["alloc_per_s"] == 200.0);	// the deprecated alias
}

TEST_CASE("top's document with names that are not UTF-8", "[daemon][json]")
{
	// Without ppctld, top's rows come from the kernel: an interface name
	// is whatever bytes root gave it, and dump() must not throw.
	ppkit::Sample s;
	s.pool.id = 5;
	s.pool.owner = "drv\xc3";
	s.pool.ifindex = 9;
	s.pool.ifname = "eth\xff\xfe";
	TopRow r = top_row(s, ppkit::Window{});
	TopHeader h{1, 1.0, "kernel (ppctld not running)"};
	std::string text;
	REQUIRE_NOTHROW(text = top_doc({r}, h).dump());
	json doc = json::parse(text);
	CHECK(doc["pools"][0]["ifname"] == "eth\xef\xbf\xbd\xef\xbf\xbd");
	CHECK(doc["pools"][0]["owner"] == "drv\xef\xbf\xbd");
}

TEST_CASE("a history table and document from ppctld's reply", "[daemon]")
{
	json reply = {{"ok", true},
		      {"version", 1},
		      {"interval_s", 1.0},
		      {"pool", row(3, nullptr, nullptr)},
		      {"points", json::array({
					 {{"time_ns", 1'000'000'000ULL}, {"inflight", 640}, {"served_per_s", 2000.0},
					  {"released_per_s", 0.0}, {"hit", 1.0}, {"recycle", 1.0}},
					 {{"time_ns", 2'000'000'000ULL}, {"inflight", 650}, {"served_per_s", nullptr},
					  {"released_per_s", nullptr}, {"hit", nullptr}, {"recycle", nullptr}},
				 })}};
	std::string t = history_table(reply, {false, 100, false});
	CHECK_THAT(t, Catch::Contains("pool 3 (ppkit) ppsim sim0/2 queue 2: live, 2 points"));
	CHECK_THAT(t, Catch::Contains("2.0K") && Catch::Contains("100.0%"));
	// From a ppctld older than the name: "alloc_per_s" is pages served.
	json old = reply;
	for (json &p : old["points"]) {
		p["alloc_per_s"] = p["served_per_s"];
		p.erase("served_per_s");
	}
	CHECK(history_table(old, {false, 100, false}) == t);
	CHECK(std::count(t.begin(), t.end(), '\n') == 4);
	json doc = history_doc(reply);
	CHECK_FALSE(doc.contains("ok"));
	CHECK(doc["points"].size() == 2);
	CHECK_THROWS_AS(history_table(json::object({{"ok", true}}), {}), ppkit::Error);
}
