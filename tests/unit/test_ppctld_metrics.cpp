// SPDX-License-Identifier: GPL-2.0
// ppctld's Prometheus view of a store snapshot, and the node_exporter
// textfile it writes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "config.h"
#include "fd.h"
#include "metrics.h"
#include "store.h"
#include "text.h"

using namespace ppctld;
using namespace std::chrono_literals;
using ppkit::Counter;
using ppkit::Source;

namespace {

// One sample line of the text format: name{labels} value.
struct Line {
	std::string name;
	std::map<std::string, std::string> labels;
	double value = 0;
};

std::vector<Line> samples(const std::string &text)
{
	std::vector<Line> v;
	for (const std::string &l : text::lines(text)) {
		if (l.empty() || l[0] == '#')
			continue;
		Line s;
		std::size_t i = l.find_first_of("{ ");
		REQUIRE(i != std::string::npos);
		s.name = l.substr(0, i);
		if (l[i] == '{') {
			i++;
			while (l[i] != '}') {
				std::size_t eq = l.find('=', i);
				REQUIRE(eq != std::string::npos);
				REQUIRE(l[eq + 1] == '"');
				std::string key = l.substr(i, eq - i);
				std::string val;
				std::size_t j = eq + 2;
				for (; l[j] != '"'; j++) {
					if (l[j] == '\\')
						j++;
					val += l[j];
				}
				s.labels[key] = val;
				i = j + 1;
				if (l[i] == ',')
					i++;
			}
			i++;
		}
		REQUIRE(l[i] == ' ');
		s.value = std::stod(l.substr(i + 1));
		v.push_back(std::move(s));
	}
	return v;
}

std::vector<Line> named(const std::vector<Line> &all, const std::string &name)
{
	std::vector<Line> v;
	for (const Line &l : all)
		if (l.name == name)
			v.push_back(l);
	return v;
}

const Line *of_pool(const std::vector<Line> &all, const std::string &name, std::uint32_t id,
		    const std::string &rule = {})
{
	for (const Line &l : all)
		if (l.name == name && l.labels.count("pool") && l.labels.at("pool") == std::to_string(id) &&
		    (rule.empty() || l.labels.at("rule") == rule))
			return &l;
	return nullptr;
}

ppkit::Pool pool(std::uint32_t id, Source src, std::string owner, std::optional<std::uint32_t> ifindex,
		 std::string ifname, std::optional<std::uint32_t> queue)
{
	ppkit::Pool p;
	p.id = id;
	p.source = src;
	p.owner = std::move(owner);
	p.ifindex = ifindex;
	p.ifname = std::move(ifname);
	p.queue = queue;
	p.created_ns = 1000 + id;
	return p;
}

ppkit::Stats stats(std::uint32_t id, std::uint64_t scale, std::uint64_t inflight)
{
	ppkit::Stats s;
	s.pool_id = id;
	// Every counter a different value: 1000 * scale + its index.
	for (std::size_t i = 0; i < ppkit::kCounterCount; i++)
		s.set(static_cast<Counter>(i), 1000 * scale + i);
	s.set(Counter::Inflight, inflight);
	return s;
}

ppkit::Stats grow(ppkit::Stats s, std::uint64_t by)
{
	for (std::size_t i = 0; i < ppkit::kCounterCount; i++)
		if (!ppkit::is_gauge(i))
			s.values[i] += by;
	return s;
}

// A store with two pools, ppkit pool 3 (on eth0, queue 1) and pool 7 (no
// device), sampled once or twice.
struct TwoPools {
	explicit TwoPools(int rounds)
	{
		Config c;
		c.alerts.hit_below = 0.99;	// pool 7 stays below that
		c.alerts.hit_for_s = 0;
		store = std::make_unique<Store>(c, epoch, 1'700'000'000'000'000'000ULL);
		store->on_backend_up(Source::Ppkit);
		store->on_pools(Source::Ppkit,
				{pool(3, Source::Ppkit, "mvneta", 2, "eth0", 1),
				 pool(7, Source::Ppkit, "pp_poolgen", std::nullopt, "", std::nullopt)});
		a3 = stats(3, 1, 40);
		a7 = stats(7, 2, 7);
		store->on_stats(Source::Ppkit, {a3, a7}, epoch + 1s, 1);
		store->count_round(0.01, false);
		if (rounds > 1) {
			a3 = grow(a3, 100);
			ppkit::Stats b7 = a7;
			// Pool 7: 10 pages served, none from recycled stock.
			b7.values[ppkit::index(Counter::PagesFromAlloc)] += 10;
			a7 = b7;
			store->on_stats(Source::Ppkit, {a3, a7}, epoch + 2s, 2);
			store->count_round(0.02, false);
		}
		store->publish();
		snap = store->snapshot();
	}

	std::chrono::steady_clock::time_point epoch = std::chrono::steady_clock::now();
	std::unique_ptr<Store> store;
	std::shared_ptr<const Snapshot> snap;
	ppkit::Stats a3, a7;
};

class TempDir {
public:
	TempDir()
	{
		std::string t = (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
		t += "/ppctld-metrics-XXXXXX";
		std::vector<char> buf(t.begin(), t.end());
		buf.push_back('\0');
		REQUIRE(mkdtemp(buf.data()));
		path_ = buf.data();
	}
	~TempDir()
	{
		for (const std::string &f : entries())
			unlink((path_ + "/" + f).c_str());
		rmdir(path_.c_str());
	}
	TempDir(const TempDir &) = delete;
	TempDir &operator=(const TempDir &) = delete;

	const std::string &path() const { return path_; }
	std::vector<std::string> entries() const
	{
		std::vector<std::string> v;
		if (DIR *d = opendir(path_.c_str())) {
			while (dirent *e = readdir(d))
				if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
					v.push_back(e->d_name);
			closedir(d);
		}
		return v;
	}

private:
	std::string path_;
};

std::string slurp(const std::string &path)
{
	std::ifstream f(path);
	std::stringstream ss;
	ss << f.rdbuf();
	return ss.str();
}

}  // namespace

TEST_CASE("metrics: every counter of every pool, labelled by pool and source", "[ppctld][metrics]")
{
	TwoPools t(2);
	std::string text = exposition(*t.snap);
	auto all = samples(text);

	auto served = named(all, "ppkit_pool_pages_from_cache_total");
	REQUIRE(served.size() == 2);
	CHECK_THAT(text, Catch::Contains("# TYPE ppkit_pool_pages_from_cache_total counter"));

	const Line *p3 = of_pool(all, "ppkit_pool_pages_from_cache_total", 3);
	REQUIRE(p3);
	CHECK(p3->labels == std::map<std::string, std::string>{{"pool", "3"}, {"source", "ppkit"}});
	CHECK(p3->value == static_cast<double>(t.a3.get(Counter::PagesFromCache)));

	// Every counter, under its name, with the value the pool reported;
	// but alloc_fast, which a ppkit pool derives from the others.
	for (std::size_t i = 0; i < ppkit::kCounterCount; i++) {
		auto c = static_cast<Counter>(i);
		if (ppkit::is_gauge(c))
			continue;
		std::string name = "ppkit_pool_" + std::string(ppkit::name(c)) + "_total";
		INFO(name);
		if (c == Counter::AllocFast) {
			CHECK(named(all, name).empty());
			continue;
		}
		const Line *l3 = of_pool(all, name, 3);
		REQUIRE(l3);
		CHECK(l3->value == static_cast<double>(t.a3.get(c)));
		CHECK(l3->labels.size() == 2);
		const Line *l7 = of_pool(all, name, 7);
		REQUIRE(l7);
		CHECK(l7->value == static_cast<double>(t.a7.get(c)));
	}
	// The gauges; the ring level is recycle_ring - ring_consumed.
	const Line *in3 = of_pool(all, "ppkit_pool_inflight_pages", 3);
	REQUIRE(in3);
	CHECK(in3->value == 40);
	CHECK(of_pool(all, "ppkit_pool_inflight_pages", 7)->value == 7);
	CHECK_THAT(text, Catch::Contains("# TYPE ppkit_pool_inflight_pages gauge"));
	const Line *mem = of_pool(all, "ppkit_pool_inflight_bytes", 3);
	REQUIRE(mem);
	CHECK(mem->value == static_cast<double>(t.a3.get(Counter::InflightMem)));
	CHECK(of_pool(all, "ppkit_pool_cache_pages", 3));
	CHECK_FALSE(of_pool(all, "ppkit_pool_ring_pages", 3));
	CHECK(of_pool(all, "ppkit_pool_lent_pages", 3));
	CHECK(named(all, "ppkit_pool_inflight").empty());
	CHECK(named(all, "ppkit_pool_inflight_mem").empty());
	CHECK(named(all, "ppkit_pool_inflight_total").empty());
}

TEST_CASE("metrics: ppkit_pool_info describes each pool once", "[ppctld][metrics]")
{
	TwoPools t(2);
	std::string text = exposition(*t.snap);
	auto all = samples(text);
	auto info = named(all, "ppkit_pool_info");
	REQUIRE(info.size() == 2);
	CHECK_THAT(text, Catch::Contains("# TYPE ppkit_pool_info gauge"));
	const Line *i3 = of_pool(all, "ppkit_pool_info", 3);
	REQUIRE(i3);
	CHECK(i3->value == 1);
	CHECK(i3->labels == std::map<std::string, std::string>{{"pool", "3"},
							       {"source", "ppkit"},
							       {"owner", "mvneta"},
							       {"ifindex", "2"},
							       {"device", "eth0"},
							       {"queue", "1"},
							       {"state", "live"}});
	const Line *i7 = of_pool(all, "ppkit_pool_info", 7);
	REQUIRE(i7);
	CHECK(i7->labels.at("owner") == "pp_poolgen");
	CHECK(i7->labels.at("ifindex").empty());
	CHECK(i7->labels.at("device").empty());
	CHECK(i7->labels.at("queue").empty());
	// The description is nowhere else.
	for (const Line &l : all)
		if (l.name != "ppkit_pool_info")
			CHECK_FALSE(l.labels.count("device"));
}

namespace {

// A store that follows one ppkit pool, and its exposition after a sample.
struct OnePool {
	Config c;
	Store store{c, std::chrono::steady_clock::now(), 1};
	std::uint64_t realtime = 0;

	explicit OnePool(const ppkit::Pool &p)
	{
		store.on_backend_up(Source::Ppkit);
		store.on_pools(Source::Ppkit, {p});
	}
	std::string scrape(const ppkit::Stats &st)
	{
		store.on_stats(Source::Ppkit, {st}, std::chrono::steady_clock::now(), ++realtime);
		store.publish();
		return exposition(*store.snapshot());
	}
};

}  // namespace

TEST_CASE("metrics: a counter appears with its first event", "[ppctld][metrics]")
{
	OnePool one(pool(1, Source::Ppkit, "pp_poolgen", 1, "lo", 0));
	ppkit::Stats st;
	st.pool_id = 1;
	for (std::size_t i = 0; i < ppkit::kCounterCount; i++)
		st.set(static_cast<Counter>(i), 0);
	st.set(Counter::PagesAllocated, 8);
	st.set(Counter::PagesFromAlloc, 8);
	st.set(Counter::Inflight, 8);
	auto all = samples(one.scrape(st));
	CHECK(of_pool(all, "ppkit_pool_pages_allocated_total", 1)->value == 8);
	CHECK(of_pool(all, "ppkit_pool_pages_from_alloc_total", 1)->value == 8);
	CHECK_FALSE(of_pool(all, "ppkit_pool_pages_released_total", 1));
	CHECK_FALSE(of_pool(all, "ppkit_pool_recycle_cached_total", 1));
	// Gauges are there at 0.
	const Line *lent = of_pool(all, "ppkit_pool_lent_pages", 1);
	REQUIRE(lent);
	CHECK(lent->value == 0);
	CHECK(of_pool(all, "ppkit_pool_inflight_pages", 1)->value == 8);
}

TEST_CASE("metrics: the stack's held pages and the oldest one's age, in seconds",
	  "[ppctld][metrics]")
{
	OnePool one(pool(1, Source::Ppkit, "ppsim", 2, "sim0", 0));
	ppkit::Stats st;
	st.pool_id = 1;
	st.set(Counter::LentPages, 40);
	st.set(Counter::LentHeld, 32);
	st.set(Counter::LentOldestMs, 372500);
	std::string text = one.scrape(st);
	auto all = samples(text);
	const Line *held = of_pool(all, "ppkit_pool_lent_held_pages", 1);
	REQUIRE(held);
	CHECK(held->value == 32);
	const Line *oldest = of_pool(all, "ppkit_pool_lent_oldest_seconds", 1);
	REQUIRE(oldest);
	CHECK(oldest->value == Approx(372.5));
	CHECK_THAT(text, Catch::Contains("# TYPE ppkit_pool_lent_oldest_seconds gauge"));
	CHECK(named(all, "ppkit_pool_lent_oldest_ms").empty());
	CHECK(named(all, "ppkit_pool_lent_held").empty());

	// Nothing held: no age, and the count at 0.
	st.set(Counter::LentHeld, 0);
	st.set(Counter::LentOldestMs, 0);
	all = samples(one.scrape(st));
	REQUIRE(of_pool(all, "ppkit_pool_lent_held_pages", 1));
	CHECK(of_pool(all, "ppkit_pool_lent_held_pages", 1)->value == 0);
	CHECK_FALSE(of_pool(all, "ppkit_pool_lent_oldest_seconds", 1));
}

TEST_CASE("metrics: a scrape of 1,000 pools", "[ppctld][metrics]")
{
	// 1,000 pools of pp_poolgen (8 pages each in flight, no traffic):
	// the figure of Documentation/ppctld.rst.  Busy pools, every counter
	// counting, cost more: their size is printed, not bounded.
	Config c;
	Store store(c, std::chrono::steady_clock::now(), 1);
	store.on_backend_up(Source::Ppkit);
	std::vector<ppkit::Pool> pools;
	std::vector<ppkit::Stats> idle, busy;
	for (std::uint32_t id = 1; id <= 1000; id++) {
		pools.push_back(pool(id, Source::Ppkit, "pp_poolgen", 1, "lo", id - 1));
		ppkit::Stats st;
		st.pool_id = id;
		for (std::size_t i = 0; i < ppkit::kCounterCount; i++)
			st.set(static_cast<Counter>(i), 0);
		st.set(Counter::AllocSlow, 1);
		st.set(Counter::PagesAllocated, 8);
		st.set(Counter::PagesFromAlloc, 8);
		st.set(Counter::Inflight, 8);
		st.set(Counter::InflightMem, 8 * 4096);
		idle.push_back(st);
		busy.push_back(stats(id, 1000 + id, 8));
	}
	store.on_pools(Source::Ppkit, pools);
	store.on_stats(Source::Ppkit, idle, std::chrono::steady_clock::now(), 1);
	store.publish();
	const std::size_t idle_bytes = exposition(*store.snapshot()).size();
	store.on_stats(Source::Ppkit, busy, std::chrono::steady_clock::now() + 1s, 2);
	store.publish();
	const std::size_t busy_bytes = exposition(*store.snapshot()).size();
	WARN("1,000 pools: " << idle_bytes << " bytes idle, " << busy_bytes << " busy");
	CHECK(idle_bytes <= 1'500'000);
	CHECK(busy_bytes > idle_bytes);
}

TEST_CASE("metrics: a counter a backend does not report is left out", "[ppctld][metrics]")
{
	Config c;
	Store store(c, std::chrono::steady_clock::now(), 1);
	ppkit::Pool p = pool(1, Source::Netdev, "mlx5_core", 4, "eth2", 0);
	store.on_pools(Source::Netdev, {p});
	ppkit::Stats s;
	s.pool_id = 1;
	s.set(Counter::AllocFast, 12345);
	s.set(Counter::RecycleRing, 678);
	store.on_stats(Source::Netdev, {s}, std::chrono::steady_clock::now(), 1);
	store.publish();
	auto all = samples(exposition(*store.snapshot()));
	const Line *l = of_pool(all, "ppkit_pool_alloc_fast_total", 1);
	REQUIRE(l);
	CHECK(l->value == 12345);
	CHECK(l->labels.at("source") == "netdev");
	CHECK(of_pool(all, "ppkit_pool_recycle_ring_total", 1)->value == 678);
	CHECK_FALSE(of_pool(all, "ppkit_pool_pages_from_cache_total", 1));
	CHECK_FALSE(of_pool(all, "ppkit_pool_inflight_pages", 1));
}

TEST_CASE("metrics: pages in flight of a pool without statistics", "[ppctld][metrics]")
{
	// Debian's 6.12: the netdev family lists pools with their in-flight
	// pages but has no page-pool-stats-get (CONFIG_PAGE_POOL_STATS=n).
	Config c;
	Store store(c, std::chrono::steady_clock::now(), 1);
	ppkit::Pool p = pool(3, Source::Netdev, "", 2, "sim0", std::nullopt);
	p.inflight = 256;
	p.inflight_mem = 256 * 4096;
	ppkit::Pool q = pool(4, Source::Netdev, "", 2, "sim0", std::nullopt);
	q.inflight = 7;
	store.on_backend_up(Source::Netdev);
	store.on_pools(Source::Netdev, {p, q});
	// pool 4 has statistics after all: its own gauge wins, once
	ppkit::Stats s;
	s.pool_id = 4;
	s.set(Counter::Inflight, 9);
	store.on_stats(Source::Netdev, {s}, std::chrono::steady_clock::now(), 1);
	store.publish();
	auto all = samples(exposition(*store.snapshot()));

	const Line *pages = of_pool(all, "ppkit_pool_inflight_pages", 3);
	REQUIRE(pages);
	CHECK(pages->value == 256);
	CHECK(pages->labels.at("source") == "netdev");
	CHECK(of_pool(all, "ppkit_pool_info", 3)->labels.at("device") == "sim0");
	const Line *bytes = of_pool(all, "ppkit_pool_inflight_bytes", 3);
	REQUIRE(bytes);
	CHECK(bytes->value == 256 * 4096);
	auto four = named(all, "ppkit_pool_inflight_pages");
	CHECK(std::count_if(four.begin(), four.end(),
			    [](const Line &l) { return l.labels.at("pool") == "4"; }) == 1);
	const Line *p4 = of_pool(all, "ppkit_pool_inflight_pages", 4);
	REQUIRE(p4);
	CHECK(p4->value == 9);
	CHECK_FALSE(of_pool(all, "ppkit_pool_inflight_bytes", 4));
}

TEST_CASE("metrics: rates once there are two samples", "[ppctld][metrics]")
{
	SECTION("one sample: no rates")
	{
		TwoPools t(1);
		auto all = samples(exposition(*t.snap));
		CHECK(named(all, "ppkit_pool_alloc_hit_ratio").empty());
		CHECK(named(all, "ppkit_pool_recycle_ratio").empty());
		CHECK(named(all, "ppkit_pool_pages_from_cache_total").size() == 2);
	}
	SECTION("two samples")
	{
		TwoPools t(2);
		auto all = samples(exposition(*t.snap));
		REQUIRE(named(all, "ppkit_pool_alloc_hit_ratio").size() == 2);
		// Pool 3: 300 of 400 pages from recycled stock.
		const Line *h3 = of_pool(all, "ppkit_pool_alloc_hit_ratio", 3);
		REQUIRE(h3);
		CHECK(h3->value == Approx(0.75));
		CHECK(of_pool(all, "ppkit_pool_alloc_hit_ratio", 7)->value == 0);
		// Pages per second follow from the counters (rate()).
		CHECK(named(all, "ppkit_pool_served_pages_per_second").empty());
		CHECK(of_pool(all, "ppkit_pool_recycle_ratio", 3));
		// Pool 7 served pages, none left the driver: no recycle rate.
		CHECK_FALSE(of_pool(all, "ppkit_pool_recycle_ratio", 7));
	}
}

TEST_CASE("metrics: alert states, per pool and rule", "[ppctld][metrics]")
{
	TwoPools t(2);
	auto all = samples(exposition(*t.snap));
	auto alerts = named(all, "ppkit_pool_alert");
	CHECK(alerts.size() == 4);
	for (const Line &l : alerts) {
		CHECK(l.labels.count("rule"));
		CHECK(l.labels.count("source"));
	}
	const Line *low7 = of_pool(all, "ppkit_pool_alert", 7, "low-hit-rate");
	REQUIRE(low7);
	CHECK(low7->value == 1);
	const Line *low3 = of_pool(all, "ppkit_pool_alert", 3, "low-hit-rate");
	REQUIRE(low3);
	CHECK(low3->value == 1);	// 75% < 99%
	const Line *leak7 = of_pool(all, "ppkit_pool_alert", 7, "leak-suspect");
	REQUIRE(leak7);
	CHECK(leak7->value == 0);
	CHECK(of_pool(all, "ppkit_pool_alert", 3, "leak-suspect")->value == 0);
	auto raised = named(all, "ppctld_alerts_raised_total");
	REQUIRE(raised.size() == 1);
	CHECK(raised[0].value == 2);
}

TEST_CASE("metrics: the daemon's own", "[ppctld][metrics]")
{
	TwoPools t(2);
	std::string text = exposition(*t.snap);
	auto all = samples(text);
	auto n = named(all, "ppctld_samples_total");
	REQUIRE(n.size() == 1);
	CHECK(n[0].value == 2);
	CHECK(n[0].labels.empty());
	CHECK_THAT(text, Catch::Contains("# TYPE ppctld_samples_total counter"));
	CHECK(named(all, "ppctld_sample_errors_total").at(0).value == 0);
	CHECK(named(all, "ppctld_sample_duration_seconds").at(0).value == Approx(0.02));
	CHECK(named(all, "ppctld_history_bytes").at(0).value ==
	      static_cast<double>(t.snap->history_bytes));
	auto up = named(all, "ppctld_backend_up");
	REQUIRE(up.size() == 1);
	CHECK(up[0].labels.at("source") == "ppkit");
	CHECK(up[0].value == 1);
	auto pools = named(all, "ppctld_pools");
	REQUIRE(pools.size() == 1);
	CHECK(pools[0].value == 2);

}

TEST_CASE("metrics: an empty snapshot", "[ppctld][metrics]")
{
	Config c;
	Store store(c, std::chrono::steady_clock::now(), 1);
	auto all = samples(exposition(*store.snapshot()));
	CHECK(named(all, "ppkit_pool_info").empty());
	REQUIRE(named(all, "ppctld_samples_total").size() == 1);
	CHECK(named(all, "ppctld_samples_total")[0].value == 0);
}

namespace {

// One HTTP/1.1 GET of /metrics on 127.0.0.1:@port: the status line and
// headers, and the body with its chunked encoding undone.
struct Reply {
	std::string head, body;
};

Reply get_metrics(int port, bool gzip)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	REQUIRE(fd >= 0);
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(static_cast<std::uint16_t>(port));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	REQUIRE(connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0);
	std::string req = std::string("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n") +
			  (gzip ? "Accept-Encoding: gzip\r\n" : "") + "\r\n";
	REQUIRE(write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size()));
	std::string all;
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		all.append(buf, static_cast<std::size_t>(n));
	close(fd);
	Reply r;
	std::size_t end = all.find("\r\n\r\n");
	REQUIRE(end != std::string::npos);
	r.head = all.substr(0, end + 2);
	REQUIRE_THAT(r.head, Catch::Contains("Transfer-Encoding: chunked"));
	for (std::size_t i = end + 4;;) {
		std::size_t eol = all.find("\r\n", i);
		REQUIRE(eol != std::string::npos);
		std::size_t len = std::stoul(all.substr(i, eol - i), nullptr, 16);
		if (len == 0)
			break;
		r.body += all.substr(eol + 2, len);
		i = eol + 2 + len + 2;
	}
	if (gzip) {
		z_stream z{};
		REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);
		std::string out(64 << 20, '\0');
		z.next_in = reinterpret_cast<Bytef *>(r.body.data());
		z.avail_in = static_cast<uInt>(r.body.size());
		z.next_out = reinterpret_cast<Bytef *>(out.data());
		z.avail_out = static_cast<uInt>(out.size());
		CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
		out.resize(z.total_out);
		inflateEnd(&z);
		r.body = std::move(out);
	}
	return r;
}

}  // namespace

TEST_CASE("metrics: /metrics streams the published snapshot, plain or gzip", "[ppctld][metrics]")
{
	// 1,000 pools: many pieces, the chunked encoding and the compressor's
	// output buffer filled many times over.
	Config c;
	Store store(c, std::chrono::steady_clock::now(), 1);
	store.on_backend_up(Source::Ppkit);
	std::vector<ppkit::Pool> pools;
	std::vector<ppkit::Stats> busy;
	for (std::uint32_t id = 1; id <= 1000; id++) {
		pools.push_back(pool(id, Source::Ppkit, "pp_\"poolgen\"", 1, "lo", id - 1));
		busy.push_back(stats(id, 1000 + id, 8));
	}
	store.on_pools(Source::Ppkit, pools);
	store.on_stats(Source::Ppkit, busy, std::chrono::steady_clock::now(), 1);
	store.publish();
	const std::string text = exposition(*store.snapshot());
	REQUIRE(text.size() > 4 * kExpositionPiece);

	MetricsServer server("127.0.0.1:0", store);
	REQUIRE(server.port() > 0);
	CHECK(server.take_scrapes() == 0);
	Reply plain = get_metrics(server.port(), false);
	CHECK_THAT(plain.head, Catch::StartsWith("HTTP/1.1 200"));
	CHECK_THAT(plain.head, Catch::Contains("text/plain; version=0.0.4"));
	CHECK_THAT(plain.head, !Catch::Contains("Content-Encoding"));
	CHECK(plain.body == text);
	Reply gz = get_metrics(server.port(), true);
	CHECK_THAT(gz.head, Catch::Contains("Content-Encoding: gzip"));
	CHECK(gz.body == text);
	// ... and counts the scrapes for the daemon's heap trim.
	CHECK(server.take_scrapes() == 2);
	CHECK(server.take_scrapes() == 0);
	// The owner's quotes are escaped in the label.
	CHECK_THAT(text, Catch::Contains("owner=\"pp_\\\"poolgen\\\"\""));
}

TEST_CASE("metrics: 64 slow clients leave a scrape its answer within a second",
	  "[ppctld][metrics]")
{
	Config c;
	Store store(c, std::chrono::steady_clock::now(), 1);
	store.publish();
	MetricsServer server("127.0.0.1:0", store);
	REQUIRE(server.port() > 0);
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(static_cast<std::uint16_t>(server.port()));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	// Each sends the first byte of a request, and nothing more for now.
	std::vector<Fd> slow;
	for (int i = 0; i < 64; i++) {
		Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
		REQUIRE(fd);
		REQUIRE(connect(fd.get(), reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0);
		REQUIRE(write(fd.get(), "G", 1) == 1);
		slow.push_back(std::move(fd));
	}
	auto t0 = std::chrono::steady_clock::now();
	Reply r = get_metrics(server.port(), false);
	double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	INFO("a scrape behind 64 slow clients took " << s << " s");
	CHECK_THAT(r.head, Catch::StartsWith("HTTP/1.1 200"));
	CHECK(s < 1.0);
}

TEST_CASE("metrics: the pieces of the exposition end at line ends", "[ppctld][metrics]")
{
	TwoPools t(2);
	std::size_t pieces = 0;
	std::string all;
	write_exposition(*t.snap, [&](std::string_view p) {
		pieces++;
		CHECK(p.back() == '\n');
		all.append(p);
	});
	CHECK(pieces >= 1);
	CHECK(all == exposition(*t.snap));
}

TEST_CASE("metrics: the node_exporter textfile", "[ppctld][metrics]")
{
	TwoPools t(2);
	TempDir dir;
	std::string path = dir.path() + "/ppkit.prom";

	write_textfile(path, *t.snap);
	CHECK(slurp(path) == exposition(*t.snap));
	CHECK(dir.entries() == std::vector<std::string>{"ppkit.prom"});

	// Replaced, not appended to, and still no temporary file.
	TwoPools u(1);
	write_textfile(path, *u.snap);
	CHECK(slurp(path) == exposition(*u.snap));
	CHECK(dir.entries() == std::vector<std::string>{"ppkit.prom"});

	// A directory that is not there.
	std::string missing = dir.path() + "/no/such/dir/ppkit.prom";
	CHECK_THROWS_AS(write_textfile(missing, *t.snap), std::system_error);
	try {
		write_textfile(missing, *t.snap);
	} catch (const std::system_error &e) {
		CHECK(e.code().value() == ENOENT);
	}
	CHECK(dir.entries() == std::vector<std::string>{"ppkit.prom"});
}

TEST_CASE("metrics: the textfile is never written through a link", "[ppctld][metrics]")
{
	TempDir dir;
	TwoPools t(2);
	std::string path = dir.path() + "/ppkit.prom", victim = dir.path() + "/victim";
	{
		std::ofstream(victim) << "keep\n";
	}
	// a link planted at the temporary name, and one at the file's own
	REQUIRE(symlink(victim.c_str(), (path + ".tmp").c_str()) == 0);
	REQUIRE(symlink(victim.c_str(), path.c_str()) == 0);
	write_textfile(path, *t.snap);
	CHECK(slurp(victim) == "keep\n");
	struct stat st {};
	REQUIRE(lstat(path.c_str(), &st) == 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK(slurp(path) == exposition(*t.snap));
	std::vector<std::string> left = dir.entries();
	std::sort(left.begin(), left.end());
	CHECK(left == std::vector<std::string>{"ppkit.prom", "victim"});
}

TEST_CASE("metrics: the daemon's textfile goes with it", "[ppctld][metrics]")
{
	TempDir dir;
	TwoPools t(2);
	std::string path = dir.path() + "/ppkit.prom";
	{
		Textfile f(path);
		CHECK(f.path() == path);
		f.write(*t.snap);
		CHECK(dir.entries() == std::vector<std::string>{"ppkit.prom"});
	}
	CHECK(dir.entries().empty());
	// one that never wrote removes nothing (another daemon's file)
	write_textfile(path, *t.snap);
	{
		Textfile f(path);
	}
	CHECK(dir.entries() == std::vector<std::string>{"ppkit.prom"});
}

TEST_CASE("metrics: label values that are not UTF-8", "[ppctld][metrics]")
{
	// Prometheus refuses a scrape with invalid UTF-8 in a label value: a
	// bad byte of an interface or driver name becomes U+FFFD.
	Config c;
	Store store(c, std::chrono::steady_clock::now(), 1'700'000'000'000'000'000ULL);
	store.on_pools(Source::Ppkit, {pool(3, Source::Ppkit, "drv\xc3", 2, "eth\xff\xfe\"", 1)});
	store.publish();
	std::string text = exposition(*store.snapshot());
	CHECK(text.find('\xff') == std::string::npos);
	CHECK(text.find('\xfe') == std::string::npos);
	auto all = samples(text);
	const Line *i3 = of_pool(all, "ppkit_pool_info", 3);
	REQUIRE(i3);
	CHECK(i3->labels.at("device") == "eth\xef\xbf\xbd\xef\xbf\xbd\"");
	CHECK(i3->labels.at("owner") == "drv\xef\xbf\xbd");
}
