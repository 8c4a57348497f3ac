// SPDX-License-Identifier: GPL-2.0
// ppctld's JSON API: the replies of handle_request(), then the server on a
// real Unix socket in a directory of its own, driven by a bounded poll loop
// in the test, and ppkit::DaemonClient against it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "api.h"
#include "config.h"
#include "fd.h"
#include "ppkit/daemon.h"
#include "ppkit/error.h"
#include "store.h"
#include "text.h"

using namespace ppctld;
using namespace std::chrono_literals;
using nlohmann::json;
using ppkit::Counter;
using ppkit::Source;

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint64_t kEpochRealtime = 1'700'000'000'000'000'000ULL;

ppkit::Pool pool(std::uint32_t id, Source src = Source::Ppkit, std::uint64_t created = 1000)
{
	ppkit::Pool p;
	p.id = id;
	p.source = src;
	p.owner = "mvneta";
	p.ifindex = 2;
	p.ifname = "eth0";
	p.queue = 1;
	p.napi_id = 8193;
	p.created_ns = created;
	return p;
}

// Counters for @served pages served in all, 90% of them from the cache,
// as many returned and 95% of those recycled.
ppkit::Stats stats(std::uint32_t id, std::uint64_t served, std::uint64_t inflight)
{
	ppkit::Stats s;
	s.pool_id = id;
	s.set(Counter::AllocFast, served);
	s.set(Counter::PagesFromCache, served / 10 * 9);
	s.set(Counter::PagesFromRing, 0);
	s.set(Counter::PagesFromStack, 0);
	s.set(Counter::PagesFromAlloc, served / 10);
	s.set(Counter::PagesReturned, served);
	s.set(Counter::PagesReclaimed, 0);
	s.set(Counter::PagesOrphaned, 0);
	s.set(Counter::RecycleCached, served / 20 * 19);
	s.set(Counter::RecycleRing, 0);
	s.set(Counter::PagesReleased, served / 20);
	s.set(Counter::Inflight, inflight);
	return s;
}

// A store with ppkit pools 3 (sampled three times) and 4 (once), netdev
// pool 3 (once), and ppkit pool 9, destroyed after one sample.  The
// samples lie 90 s or less in the past.
struct Fixture {
	Fixture() : epoch(Clock::now() - 100s), store(Config{}, epoch, kEpochRealtime)
	{
		info.interval_s = 1;
		info.history_s = 3600;
		info.started_realtime_ns = kEpochRealtime;
		info.pid = 4242;
		store.on_backend_up(Source::Ppkit);
		store.on_pools(Source::Ppkit, {pool(3), pool(4), pool(9)});
		store.on_pools(Source::Netdev, {pool(3, Source::Netdev, 0)});
		store.on_stats(Source::Ppkit, {stats(3, 1000, 10), stats(4, 50, 1), stats(9, 10, 0)},
			       epoch + 10s, kEpochRealtime + 10'000'000'000ULL);
		store.on_stats(Source::Ppkit, {stats(3, 3000, 12)}, epoch + 11s,
			       kEpochRealtime + 11'000'000'000ULL);
		store.on_stats(Source::Ppkit, {stats(3, 6000, 14)}, epoch + 13s,
			       kEpochRealtime + 13'000'000'000ULL);
		store.on_stats(Source::Netdev, {stats(3, 77, 5)}, epoch + 13s,
			       kEpochRealtime + 13'000'000'000ULL);
		ppkit::Event del;
		del.kind = ppkit::Event::Kind::Del;
		del.pool = pool(9);
		store.on_event(del);
		store.count_round(0.003, false);
		store.publish();
	}

	json ask(std::string_view line) const { return handle_request(line, store, info); }

	Clock::time_point epoch;
	Store store;
	ApiInfo info;
};

// The reply is a refusal, and says @why.
void refused(const Fixture &f, const std::string &line, const std::string &why)
{
	INFO("request: " << line.substr(0, 100));
	json r = f.ask(line);
	REQUIRE(r.is_object());
	CHECK(r.value("ok", true) == false);
	REQUIRE(r.contains("error"));
	REQUIRE(r["error"].is_string());
	CHECK_THAT(r["error"].get<std::string>(), Catch::Contains(why));
	CHECK(text::keys(r) == std::set<std::string>{"ok", "error"});
}

}  // namespace

TEST_CASE("api: status", "[ppctld][api]")
{
	Fixture f;
	json r = f.ask(R"({"cmd": "status"})");
	CHECK(text::keys(r) ==
	      std::set<std::string>{"ok", "version", "pid", "interval_s", "history_s", "started_ns",
				    "samples", "sample_errors", "last_sample_s", "pools",
				    "gone_pools", "history_bytes", "backends"});
	CHECK(r["ok"] == true);
	CHECK(r["version"] == ppkit::kDaemonApiVersion);
	CHECK(r["pid"] == 4242);
	CHECK(r["interval_s"] == 1.0);
	CHECK(r["history_s"] == 3600.0);
	CHECK(r["started_ns"] == kEpochRealtime);
	CHECK(r["samples"] == 1);
	CHECK(r["sample_errors"] == 0);
	CHECK(r["last_sample_s"].get<double>() == Approx(0.003));
	CHECK(r["pools"] == 3);
	CHECK(r["gone_pools"] == 1);
	CHECK(r["history_bytes"] == f.store.history_bytes());
	REQUIRE(r["backends"].is_array());
	REQUIRE(r["backends"].size() == 1);
	CHECK(r["backends"][0] == json{{"source", "ppkit"}, {"up", true}, {"error", nullptr}});

	f.store.on_backend_down(Source::Netdev, "no netdev family");
	f.store.publish();
	r = f.ask(R"({"cmd":"status"})");
	REQUIRE(r["backends"].size() == 2);
	CHECK(r["backends"][1] ==
	      json{{"source", "netdev"}, {"up", false}, {"error", "no netdev family"}});
	// Trailing blanks and extra keys do not matter.
	CHECK(f.ask("{\"cmd\":\"status\",\"extra\":1}  ")["ok"] == true);
}

TEST_CASE("api: pools", "[ppctld][api]")
{
	Fixture f;
	json r = f.ask(R"({"cmd": "pools"})");
	CHECK(text::keys(r) == std::set<std::string>{"ok", "version", "interval_s", "time_ns", "pools"});
	CHECK(r["ok"] == true);
	CHECK(r["version"] == ppkit::kDaemonApiVersion);
	CHECK(r["interval_s"] == 1.0);
	CHECK(r["time_ns"] == f.store.snapshot()->realtime_ns);
	REQUIRE(r["pools"].is_array());
	REQUIRE(r["pools"].size() == 3);

	const json &p = r["pools"][0];
	CHECK(text::keys(p) == std::set<std::string>{"id", "source", "owner", "ifindex", "ifname",
						     "queue", "napi_id", "state", "time_ns",
						     "inflight", "served_per_s", "alloc_per_s",
						     "released_per_s", "hit", "recycle", "alerts",
						     "counters"});
	CHECK(p["id"] == 3);
	CHECK(p["source"] == "ppkit");
	CHECK(p["owner"] == "mvneta");
	CHECK(p["ifindex"] == 2);
	CHECK(p["ifname"] == "eth0");
	CHECK(p["queue"] == 1);
	CHECK(p["napi_id"] == 8193);
	CHECK(p["state"] == "live");
	CHECK(p["time_ns"] == kEpochRealtime + 13'000'000'000ULL);
	CHECK(p["inflight"] == 14);
	// 3000 pages in 2 s, 90% hits, 95% recycled, 150 released.
	CHECK(p["served_per_s"].get<double>() == Approx(1500));
	// The deprecated alias carries the same value.
	CHECK(p["alloc_per_s"] == p["served_per_s"]);
	CHECK(p["hit"].get<double>() == Approx(0.9));
	CHECK(p["recycle"].get<double>() == Approx(0.95));
	CHECK(p["released_per_s"].get<double>() == Approx(75));
	CHECK(p["alerts"] == json::array());
	CHECK(p["counters"]["alloc_fast"] == 6000);
	CHECK(p["counters"]["pages_from_cache"] == 5400);
	CHECK(p["counters"]["inflight"] == 14);
	CHECK_FALSE(p["counters"].contains("alloc_slow"));

	// Pool 4 was sampled once: no rates yet, null rather than absent.
	const json &q = r["pools"][1];
	CHECK(q["id"] == 4);
	CHECK(q["hit"].is_null());
	CHECK(q["recycle"].is_null());
	CHECK(q["served_per_s"].is_null());
	CHECK(q["alloc_per_s"].is_null());
	CHECK(q["released_per_s"].is_null());
	CHECK(q["inflight"] == 1);

	const json &n = r["pools"][2];
	CHECK(n["id"] == 3);
	CHECK(n["source"] == "netdev");
}

TEST_CASE("api: history", "[ppctld][api]")
{
	Fixture f;
	json r = f.ask(R"({"cmd": "history", "pool": 3})");
	CHECK(text::keys(r) == std::set<std::string>{"ok", "version", "interval_s", "pool", "points"});
	CHECK(r["ok"] == true);
	CHECK(r["version"] == ppkit::kDaemonApiVersion);
	CHECK(r["interval_s"] == 1.0);
	CHECK(r["pool"]["id"] == 3);
	CHECK(r["pool"]["source"] == "ppkit");
	CHECK(r["pool"]["state"] == "live");
	CHECK(r["pool"]["ifname"] == "eth0");
	REQUIRE(r["points"].is_array());
	REQUIRE(r["points"].size() == 3);
	const json &pts = r["points"];
	for (const json &p : pts)
		CHECK(text::keys(p) == std::set<std::string>{"time_ns", "inflight", "served_per_s",
							     "alloc_per_s", "released_per_s", "hit",
							     "recycle"});
	// Oldest first.
	CHECK(pts[0]["time_ns"] == kEpochRealtime + 10'000'000'000ULL);
	CHECK(pts[1]["time_ns"] == kEpochRealtime + 11'000'000'000ULL);
	CHECK(pts[2]["time_ns"] == kEpochRealtime + 13'000'000'000ULL);
	CHECK(pts[0]["inflight"] == 10);
	CHECK(pts[2]["inflight"] == 14);
	// The first point has no window: null rates, never NaN.
	for (const char *k : {"served_per_s", "alloc_per_s", "released_per_s", "hit", "recycle"})
		CHECK(pts[0][k].is_null());
	// 2000 pages in 1 s, then 3000 in 2 s.
	CHECK(pts[1]["served_per_s"].get<double>() == Approx(2000));
	CHECK(pts[2]["served_per_s"].get<double>() == Approx(1500));
	for (const json &p : pts)
		CHECK(p["alloc_per_s"] == p["served_per_s"]);	// the deprecated alias
	CHECK(pts[2]["hit"].get<double>() == Approx(0.9).epsilon(1e-6));
	CHECK(pts[2]["recycle"].get<double>() == Approx(0.95).epsilon(1e-6));
	// The reply is valid JSON text, NaN-free.
	CHECK_THAT(r.dump(), !Catch::Contains("NaN") && !Catch::Contains("nan"));

	SECTION("of the other source")
	{
		json n = f.ask(R"({"cmd": "history", "pool": 3, "source": "netdev"})");
		CHECK(n["ok"] == true);
		CHECK(n["pool"]["source"] == "netdev");
		REQUIRE(n["points"].size() == 1);
		CHECK(n["points"][0]["inflight"] == 5);
		CHECK(f.ask(R"({"cmd": "history", "pool": 3, "source": "ppkit"})")["points"].size() == 3);
	}
	SECTION("of a destroyed pool")
	{
		json g = f.ask(R"({"cmd": "history", "pool": 9})");
		CHECK(g["ok"] == true);
		CHECK(g["pool"]["id"] == 9);
		CHECK(g["pool"]["state"] == "gone");
		CHECK(g["points"].size() == 1);
	}
	SECTION("since_s")
	{
		// The samples are 87 to 90 s old.
		CHECK(f.ask(R"({"cmd": "history", "pool": 3, "since_s": 600})")["points"].size() == 3);
		CHECK(f.ask(R"({"cmd": "history", "pool": 3, "since_s": 88.5})")["points"].size() == 1);
		json none = f.ask(R"({"cmd": "history", "pool": 3, "since_s": 0})");
		CHECK(none["ok"] == true);
		CHECK(none["points"] == json::array());
		CHECK(f.ask(R"({"cmd": "history", "pool": 3, "since_s": 1e9})")["points"].size() == 3);
	}
}

TEST_CASE("api: the history line is written as it goes, and is what a DOM would dump", "[ppctld][api]")
{
	Fixture f;
	// A pool whose interface name is not UTF-8 (written as U+FFFD), and
	// many points, some without a window (null rates).
	ppkit::Pool odd = pool(5);
	odd.ifname = "e\xfft";
	f.store.on_pools(Source::Ppkit, {pool(3), pool(4), odd});
	for (int i = 0; i < 500; i++)
		f.store.on_stats(Source::Ppkit, {stats(5, 100 * i * i, i % 7)},
				 f.epoch + 20s + std::chrono::milliseconds(100 * i),
				 kEpochRealtime + 20'000'000'000ULL + 100'000'000ULL * i);
	f.store.publish();
	for (const char *req : {R"({"cmd": "history", "pool": 5})", R"({"cmd": "history", "pool": 3})",
				R"({"cmd": "history", "pool": 9})",
				R"({"cmd": "history", "pool": 3, "since_s": 0})",
				R"({"cmd": "history", "pool": 77})"}) {
		INFO(req);
		const std::string line = reply_line(req, f.store, f.info);
		REQUIRE(!line.empty());
		CHECK(line.back() == '\n');
		CHECK(std::count(line.begin(), line.end(), '\n') == 1);
		const json dom = json::parse(line);
		CHECK(line == dom.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
	}
	const json r = f.ask(R"({"cmd": "history", "pool": 5})");
	REQUIRE(r["points"].size() == 500);
	CHECK(r["pool"]["ifname"] == "e\xef\xbf\xbdt");
	CHECK(r["points"][0]["hit"].is_null());
	CHECK(r["points"][499]["inflight"] == 499 % 7);
}

TEST_CASE("api: bad requests are refused with a message", "[ppctld][api]")
{
	Fixture f;
	refused(f, "hello", "not JSON");
	refused(f, "", "not JSON");
	refused(f, R"({"cmd": "status")", "not JSON");
	refused(f, R"({"cmd": "status"} {"cmd": "pools"})", "not JSON");
	refused(f, "[1, 2]", "\"cmd\"");
	refused(f, R"("status")", "\"cmd\"");
	refused(f, "42", "\"cmd\"");
	refused(f, "null", "\"cmd\"");
	refused(f, "{}", "\"cmd\"");
	refused(f, R"({"command": "status"})", "\"cmd\"");
	refused(f, R"({"cmd": 1})", "\"cmd\"");
	refused(f, R"({"cmd": null})", "\"cmd\"");
	refused(f, R"({"cmd": ["status"]})", "\"cmd\"");
	refused(f, R"({"cmd": "stats"})", "unknown command 'stats'");
	refused(f, R"({"cmd": "STATUS"})", "unknown command");
	refused(f, R"({"cmd": ""})", "unknown command");
	// A long unknown command is not echoed in full.
	json r = f.ask("{\"cmd\": \"" + std::string(1000, 'z') + "\"}");
	CHECK(r["ok"] == false);
	CHECK(r["error"].get<std::string>().size() < 200);

	refused(f, R"({"cmd": "history"})", "\"pool\"");
	refused(f, R"({"cmd": "history", "pool": 0})", "\"pool\"");
	refused(f, R"({"cmd": "history", "pool": 4294967296})", "\"pool\"");
	refused(f, R"({"cmd": "history", "pool": 18446744073709551615})", "\"pool\"");
	refused(f, R"({"cmd": "history", "pool": -1})", "\"pool\"");
	refused(f, R"({"cmd": "history", "pool": -4294967295})", "\"pool\"");
	refused(f, R"({"cmd": "history", "pool": "3"})", "\"pool\"");
	refused(f, R"({"cmd": "history", "pool": 3.5})", "\"pool\"");
	refused(f, R"({"cmd": "history", "pool": null})", "\"pool\"");
	refused(f, R"({"cmd": "history", "pool": true})", "\"pool\"");
	refused(f, R"({"cmd": "history", "pool": 3, "since_s": -1})", "\"since_s\"");
	refused(f, R"({"cmd": "history", "pool": 3, "since_s": "600"})", "\"since_s\"");
	refused(f, R"({"cmd": "history", "pool": 3, "since_s": null})", "\"since_s\"");
	refused(f, R"({"cmd": "history", "pool": 3, "source": "kernel"})", "\"source\"");
	refused(f, R"({"cmd": "history", "pool": 3, "source": 1})", "\"source\"");
	refused(f, R"({"cmd": "history", "pool": 3, "source": null})", "\"source\"");
	refused(f, R"({"cmd": "history", "pool": 5})", "no ppkit pool 5");
	refused(f, R"({"cmd": "history", "pool": 4294967295})", "no ppkit pool 4294967295");
	refused(f, R"({"cmd": "history", "pool": 4, "source": "netdev"})", "no netdev pool 4");
	// The largest id is a pool id.
	refused(f, R"({"cmd": "history", "pool": 4294967295})", "see ppctl list");
}

TEST_CASE("api: the longest request", "[ppctld][api]")
{
	Fixture f;
	const std::size_t max = ppkit::kDaemonMaxRequest;
	// A line of max - 1 bytes (max with its newline) is read...
	const std::string head = R"({"cmd": "status")";
	std::string ok = head + std::string(max - 1 - head.size() - 1, ' ') + "}";
	REQUIRE(ok.size() == max - 1);
	CHECK(f.ask(ok)["ok"] == true);
	// ...one more byte is too long, JSON or not.
	std::string big = head + std::string(max - head.size() - 1, ' ') + "}";
	REQUIRE(big.size() == max);
	refused(f, big, "too long");
	refused(f, std::string(5000, 'x'), "too long");
	refused(f, std::string(1 << 20, '{'), "too long");
}

// ---------------------------------------------------------------------------
// The server, on a socket.

namespace {

// A directory of its own under /tmp (a socket path must stay short).
class SockDir {
public:
	SockDir()
	{
		char buf[] = "/tmp/ppctld-api-XXXXXX";
		REQUIRE(mkdtemp(buf));
		path_ = buf;
	}
	~SockDir()
	{
		for (const char *n : {"api.sock", "other.sock", "file", "nobody.sock"})
			unlink((path_ + "/" + n).c_str());
		rmdir(path_.c_str());
	}
	SockDir(const SockDir &) = delete;
	SockDir &operator=(const SockDir &) = delete;

	std::string path(const char *name) const { return path_ + "/" + name; }

private:
	std::string path_;
};

sockaddr_un address(const std::string &path)
{
	sockaddr_un sa{};
	sa.sun_family = AF_UNIX;
	std::memcpy(sa.sun_path, path.data(), path.size());
	return sa;
}

// One round of the daemon's loop: poll the server's descriptors, serve
// what is ready.
void pump(ApiServer &srv, const Store &store, const ApiInfo &info, int timeout_ms = 10)
{
	std::vector<pollfd> fds;
	for (const ApiServer::Watch &w : srv.watches())
		fds.push_back({w.fd, w.events, 0});
	if (poll(fds.data(), fds.size(), timeout_ms) > 0)
		for (const pollfd &p : fds)
			if (p.revents)
				srv.serve(p.fd, p.revents, store, info);
	srv.expire();
}

// A non-blocking client in the test's own thread.
class Client {
public:
	explicit Client(const std::string &path)
		: fd_(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0))
	{
		REQUIRE(fd_);
		sockaddr_un sa = address(path);
		int rc = connect(fd_.get(), reinterpret_cast<sockaddr *>(&sa), sizeof(sa));
		INFO("connect: " << std::strerror(errno));
		REQUIRE(rc == 0);
	}

	void send_all(const std::string &s)
	{
		std::size_t off = 0;
		auto deadline = Clock::now() + 2s;
		while (off < s.size() && Clock::now() < deadline) {
			ssize_t n = ::send(fd_.get(), s.data() + off, s.size() - off, MSG_NOSIGNAL);
			if (n > 0)
				off += static_cast<std::size_t>(n);
			else if (n < 0 && errno != EAGAIN && errno != EINTR)
				break;
		}
		REQUIRE(off == s.size());
	}

	// One send, for a server that may have hung up already.
	bool try_send(const std::string &s)
	{
		ssize_t n = ::send(fd_.get(), s.data(), s.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
		return n == static_cast<ssize_t>(s.size());
	}

	// Read what is there; eof() once the server hung up.
	void read_some()
	{
		char buf[65536];
		for (;;) {
			ssize_t n = recv(fd_.get(), buf, sizeof(buf), MSG_DONTWAIT);
			if (n > 0) {
				in_.append(buf, static_cast<std::size_t>(n));
				continue;
			}
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				eof_ = true;
			return;
		}
	}

	std::optional<std::string> take_line()
	{
		auto nl = in_.find('\n');
		if (nl == std::string::npos)
			return std::nullopt;
		std::string l = in_.substr(0, nl);
		in_.erase(0, nl + 1);
		return l;
	}

	bool eof() const { return eof_; }
	const std::string &pending() const { return in_; }
	void close() { fd_.reset(); }

private:
	Fd fd_;
	std::string in_;
	bool eof_ = false;
};

// A server and the store it answers from, driven by the test.
struct Served {
	explicit Served(const std::string &path, std::size_t max_clients = 16, ApiLimits limits = {})
		: srv(path, 0600, "", max_clients, limits)
	{
	}

	// The next reply on @c, pumping the server, or nothing after @wait
	// (default 2 s).
	std::optional<json> reply(Client &c, Clock::duration wait = 2s)
	{
		auto deadline = Clock::now() + wait;
		for (;;) {
			if (auto l = c.take_line())
				return json::parse(*l, nullptr, false);
			if (c.eof() || Clock::now() >= deadline)
				return std::nullopt;
			pump(srv, f.store, f.info);
			c.read_some();
		}
	}

	// Whether the server hangs up on @c within 2 s.
	bool hung_up(Client &c)
	{
		auto deadline = Clock::now() + 2s;
		while (!c.eof() && Clock::now() < deadline) {
			pump(srv, f.store, f.info);
			c.read_some();
		}
		return c.eof();
	}

	// Pump for @ms.
	void settle(int ms = 50)
	{
		auto deadline = Clock::now() + std::chrono::milliseconds(ms);
		while (Clock::now() < deadline)
			pump(srv, f.store, f.info, 5);
	}

	Fixture f;
	ApiServer srv;
};

// Store @n ppkit pools (ids from 100), sampled; the size of a "pools"
// reply line (about 500 bytes a pool).
std::size_t many_pools(Served &s, std::uint32_t n)
{
	std::vector<ppkit::Pool> many;
	std::vector<ppkit::Stats> st;
	for (std::uint32_t id = 100; id < 100 + n; id++) {
		many.push_back(pool(id));
		st.push_back(stats(id, 1000, 5));
	}
	s.f.store.on_pools(Source::Ppkit, many);
	s.f.store.on_stats(Source::Ppkit, st, s.f.epoch + 20s, kEpochRealtime + 20'000'000'000ULL);
	s.f.store.publish();
	return (handle_request("{\"cmd\": \"pools\"}", s.f.store, s.f.info).dump() + "\n").size();
}

// The server pumped from a thread of its own, for clients that block.
class ServerThread {
public:
	explicit ServerThread(Served &s)
		: th_([this, &s] {
			  while (!stop_)
				  pump(s.srv, s.f.store, s.f.info, 20);
		  })
	{
	}
	~ServerThread()
	{
		stop_ = true;
		th_.join();
	}
	ServerThread(const ServerThread &) = delete;
	ServerThread &operator=(const ServerThread &) = delete;

private:
	std::atomic<bool> stop_{false};
	std::thread th_;
};

ppkit::Errc error_code(const std::function<void()> &fn, std::string *what = nullptr)
{
	try {
		fn();
	} catch (const ppkit::Error &e) {
		if (what)
			*what = e.what();
		return e.code();
	}
	FAIL("no ppkit::Error");
	return ppkit::Errc::System;
}

}  // namespace

TEST_CASE("api server: a request and its reply", "[ppctld][api][socket]")
{
	SockDir dir;
	Served s(dir.path("api.sock"));
	CHECK(s.srv.path() == dir.path("api.sock"));
	CHECK(s.srv.clients() == 0);
	Client c(s.srv.path());
	c.send_all("{\"cmd\": \"status\"}\n");
	auto r = s.reply(c);
	REQUIRE(r);
	CHECK((*r)["ok"] == true);
	CHECK((*r)["pid"] == 4242);
	CHECK(s.srv.clients() == 1);

	// The connection stays open for more, a refusal included.
	c.send_all("{\"cmd\": \"history\", \"pool\": 3}\r\n");
	r = s.reply(c);
	REQUIRE(r);
	CHECK((*r)["ok"] == true);
	CHECK((*r)["points"].size() == 3);
	c.send_all("not json\n");
	r = s.reply(c);
	REQUIRE(r);
	CHECK((*r)["ok"] == false);
	c.send_all("{\"cmd\": \"pools\"}\n");
	r = s.reply(c);
	REQUIRE(r);
	CHECK((*r)["pools"].size() == 3);

	// A request in pieces.
	c.send_all("{\"cmd\": ");
	s.settle();
	CHECK_FALSE(c.take_line());
	c.send_all("\"status\"}\n");
	r = s.reply(c);
	REQUIRE(r);
	CHECK((*r)["ok"] == true);

	// A client that leaves is forgotten.
	c.close();
	s.settle();
	CHECK(s.srv.clients() == 0);
}

TEST_CASE("api server: two requests in one write, two replies", "[ppctld][api][socket]")
{
	SockDir dir;
	Served s(dir.path("api.sock"));
	Client c(s.srv.path());
	c.send_all("{\"cmd\": \"status\"}\n{\"cmd\": \"history\", \"pool\": 4}\n{\"cmd\": \"nope\"}\n");
	auto a = s.reply(c);
	auto b = s.reply(c);
	auto e = s.reply(c);
	REQUIRE(a);
	REQUIRE(b);
	REQUIRE(e);
	CHECK((*a)["ok"] == true);
	CHECK(a->contains("samples"));
	CHECK((*b)["ok"] == true);
	CHECK((*b)["pool"]["id"] == 4);
	CHECK((*e)["ok"] == false);
	CHECK_THAT((*e)["error"].get<std::string>(), Catch::Contains("unknown command 'nope'"));
	s.settle();
	CHECK(c.pending().empty());
	CHECK_FALSE(c.eof());
}

TEST_CASE("api server: the longest line is served", "[ppctld][api][socket]")
{
	SockDir dir;
	Served s(dir.path("api.sock"));
	Client c(s.srv.path());
	// kDaemonMaxRequest bytes with the newline.
	const std::string head = R"({"cmd": "status")";
	std::string line = head + std::string(ppkit::kDaemonMaxRequest - head.size() - 2, ' ') + "}\n";
	REQUIRE(line.size() == ppkit::kDaemonMaxRequest);
	c.send_all(line);
	auto r = s.reply(c);
	REQUIRE(r);
	CHECK((*r)["ok"] == true);
	CHECK_FALSE(c.eof());
}

TEST_CASE("api server: a line without end gets one error and a hang-up",
	  "[ppctld][api][socket]")
{
	SockDir dir;
	Served s(dir.path("api.sock"));
	Client c(s.srv.path());
	c.send_all(std::string(5000, 'x'));
	auto r = s.reply(c);
	REQUIRE(r);
	CHECK((*r)["ok"] == false);
	CHECK_THAT((*r)["error"].get<std::string>(), Catch::Contains("too long"));
	CHECK(s.hung_up(c));
	CHECK(c.pending().empty());	// one reply, nothing after it
	CHECK(s.srv.clients() == 0);

	// A request that never ends, in many writes.
	Client d(s.srv.path());
	std::string chunk(1000, ' ');
	chunk[0] = '{';
	for (int i = 0; i < 4; i++) {
		d.send_all(chunk);
		s.settle(10);
	}
	d.read_some();
	CHECK_FALSE(d.take_line());	// 4000 bytes: it may still end
	d.send_all(chunk);
	r = s.reply(d);
	REQUIRE(r);
	CHECK((*r)["ok"] == false);
	CHECK(s.hung_up(d));
	CHECK(d.pending().empty());

	// Others are still served.
	Client e(s.srv.path());
	e.send_all("{\"cmd\": \"status\"}\n");
	r = s.reply(e);
	REQUIRE(r);
	CHECK((*r)["ok"] == true);
}

TEST_CASE("api server: an oversized line with its newline is refused and hung up",
	  "[ppctld][api][socket]")
{
	// api.h: "Requests longer than ppkit::kDaemonMaxRequest ... get
	// {"ok": false, ...}; an oversized one also closes the connection."
	// The same bytes must get the same answer however recv() splits them.
	SockDir dir;
	Served s(dir.path("api.sock"));
	Client c(s.srv.path());
	const std::string line = std::string(5000, 'x') + "\n";
	SECTION("in two writes")
	{
		c.send_all(line.substr(0, 4500));
		s.settle();
		(void)c.try_send(line.substr(4500));	// it may have hung up already
	}
	SECTION("in one write")
	{
		c.send_all(line);
	}
	auto r = s.reply(c);
	REQUIRE(r);
	CHECK((*r)["ok"] == false);
	CHECK_THAT((*r)["error"].get<std::string>(), Catch::Contains("too long"));
	CHECK(s.hung_up(c));
	CHECK(c.pending().empty());
}

TEST_CASE("api server: the socket's permissions", "[ppctld][api][socket]")
{
	SockDir dir;
	{
		Served s(dir.path("api.sock"));
		struct stat st {};
		REQUIRE(stat(s.srv.path().c_str(), &st) == 0);
		CHECK(S_ISSOCK(st.st_mode));
		CHECK((st.st_mode & 07777) == 0600);
	}
	// Removed on the way out.
	struct stat st {};
	CHECK(stat(dir.path("api.sock").c_str(), &st) < 0);
	{
		ApiServer g(dir.path("api.sock"), 0660, "", 4);
		REQUIRE(stat(g.path().c_str(), &st) == 0);
		CHECK((st.st_mode & 07777) == 0660);
	}
	CHECK_THROWS_AS(ApiServer(dir.path("api.sock"), 0600, "no-such-group-ppkit-test", 4),
			std::system_error);
	CHECK(stat(dir.path("api.sock").c_str(), &st) < 0);
	std::string long_path = dir.path("") + std::string(200, 'x');
	CHECK_THROWS_AS(ApiServer(long_path, 0600, "", 4), std::system_error);
}

TEST_CASE("api server: the socket's missing directory is made, and removed with it",
	  "[ppctld][api][socket]")
{
	SockDir dir;
	const std::string run = dir.path("run");
	const std::string sock = run + "/api.sock";
	struct stat st {};
	{
		ApiServer s(sock, 0600, "", 4);
		REQUIRE(stat(run.c_str(), &st) == 0);
		CHECK(S_ISDIR(st.st_mode));
		CHECK((st.st_mode & 07777) == 0755);
		CHECK(stat(sock.c_str(), &st) == 0);
	}
	CHECK(stat(run.c_str(), &st) < 0);
	// A server whose start fails leaves no directory behind either.
	CHECK_THROWS_AS(ApiServer(sock, 0600, "no-such-group-ppkit-test", 4), std::system_error);
	CHECK(stat(run.c_str(), &st) < 0);
	// One that was there (RuntimeDirectory=) stays, and so does what else is in it.
	REQUIRE(mkdir(run.c_str(), 0700) == 0);
	{
		ApiServer s(sock, 0600, "", 4);
	}
	CHECK(stat(run.c_str(), &st) == 0);
	CHECK(stat(sock.c_str(), &st) < 0);
	REQUIRE(rmdir(run.c_str()) == 0);
	// Only the socket's own directory is made, not its parents.
	CHECK_THROWS_AS(ApiServer(run + "/sub/api.sock", 0600, "", 4), std::system_error);
	CHECK(stat(run.c_str(), &st) < 0);
}

TEST_CASE("api server: a reload changes the socket's permissions in place",
	  "[ppctld][api][socket]")
{
	SockDir dir;
	Served s(dir.path("api.sock"), 1);
	struct stat st {};
	s.srv.reconfigure(0660, "", 2);
	REQUIRE(stat(s.srv.path().c_str(), &st) == 0);
	CHECK((st.st_mode & 07777) == 0660);
	// Two clients fit now.
	Client a(s.srv.path()), b(s.srv.path());
	b.send_all("{\"cmd\": \"status\"}\n");
	auto r = s.reply(b);
	REQUIRE(r);
	CHECK((*r)["ok"] == true);
	// A group that does not exist changes nothing.
	CHECK_THROWS_AS(s.srv.reconfigure(0600, "no-such-group-ppkit-test", 1), std::system_error);
	REQUIRE(stat(s.srv.path().c_str(), &st) == 0);
	CHECK((st.st_mode & 07777) == 0660);
}

TEST_CASE("api server: one server per socket", "[ppctld][api][socket]")
{
	SockDir dir;
	Served s(dir.path("api.sock"));
	try {
		ApiServer second(dir.path("api.sock"), 0600, "", 4);
		FAIL("a second server on a live socket");
	} catch (const std::system_error &e) {
		CHECK(e.code().value() == EADDRINUSE);
	}
	// The first one still has its socket, and answers.
	struct stat st {};
	REQUIRE(stat(dir.path("api.sock").c_str(), &st) == 0);
	CHECK(S_ISSOCK(st.st_mode));
	Client c(s.srv.path());
	c.send_all("{\"cmd\": \"status\"}\n");
	auto r = s.reply(c);
	REQUIRE(r);
	CHECK((*r)["ok"] == true);
}

TEST_CASE("api server: a stale socket is replaced, anything else is not",
	  "[ppctld][api][socket]")
{
	SockDir dir;
	std::string path = dir.path("api.sock");
	{
		// A daemon that died: its socket file stays, nobody listens.
		Fd l(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
		sockaddr_un sa = address(path);
		REQUIRE(bind(l.get(), reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0);
		REQUIRE(listen(l.get(), 1) == 0);
	}
	struct stat st {};
	REQUIRE(stat(path.c_str(), &st) == 0);
	{
		Served s(path);
		Client c(path);
		c.send_all("{\"cmd\": \"status\"}\n");
		auto r = s.reply(c);
		REQUIRE(r);
		CHECK((*r)["ok"] == true);
	}
	{
		// Bound, never listened on.
		Fd l(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
		sockaddr_un sa = address(path);
		REQUIRE(bind(l.get(), reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0);
	}
	{
		Served s(path);
		Client c(path);
		c.send_all("{\"cmd\": \"pools\"}\n");
		auto r = s.reply(c);
		REQUIRE(r);
		CHECK((*r)["ok"] == true);
	}
	// A regular file is not ours to remove.
	std::string file = dir.path("file");
	{
		Fd made(open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
		REQUIRE(made);
	}
	CHECK_THROWS_AS(ApiServer(file, 0600, "", 4), std::system_error);
	REQUIRE(stat(file.c_str(), &st) == 0);
	CHECK(S_ISREG(st.st_mode));
}

TEST_CASE("api server: too many clients", "[ppctld][api][socket]")
{
	SockDir dir;
	Served s(dir.path("api.sock"), 2);
	Client a(s.srv.path()), b(s.srv.path()), c(s.srv.path());
	auto r = s.reply(c);
	REQUIRE(r);
	CHECK((*r)["ok"] == false);
	CHECK_THAT((*r)["error"].get<std::string>(), Catch::Contains("too many clients (at most 2)"));
	CHECK(s.hung_up(c));
	CHECK(s.srv.clients() == 2);

	// The first two are served.
	for (Client *x : {&a, &b}) {
		x->send_all("{\"cmd\": \"status\"}\n");
		auto y = s.reply(*x);
		REQUIRE(y);
		CHECK((*y)["ok"] == true);
	}
	// Once one leaves, there is room again.
	a.close();
	s.settle();
	CHECK(s.srv.clients() == 1);
	Client d(s.srv.path());
	d.send_all("{\"cmd\": \"status\"}\n");
	r = s.reply(d);
	REQUIRE(r);
	CHECK((*r)["ok"] == true);
	CHECK(s.srv.clients() == 2);
}

TEST_CASE("DaemonClient against the server", "[ppctld][api][socket]")
{
	SockDir dir;
	Served s(dir.path("api.sock"));
	ServerThread t(s);

	ppkit::DaemonClient d(s.srv.path(), 2000ms);
	CHECK(d.path() == s.srv.path());
	json r = d.request({{"cmd", "status"}});
	CHECK(r["ok"] == true);
	CHECK(r["pid"] == 4242);
	r = d.request({{"cmd", "history"}, {"pool", 3}, {"since_s", 3600}});
	CHECK(r["points"].size() == 3);

	std::string what;
	CHECK(error_code([&] { d.request({{"cmd", "nope"}}); }, &what) == ppkit::Errc::Daemon);
	CHECK_THAT(what, Catch::Contains("unknown command 'nope'"));
	CHECK(error_code([&] { d.request({{"cmd", "history"}, {"pool", 5}}); }, &what) ==
	      ppkit::Errc::Daemon);
	CHECK_THAT(what, Catch::Contains("no ppkit pool 5"));
	// The connection is still good.
	CHECK(d.request({{"cmd", "pools"}})["pools"].size() == 3);

	// Moved, it goes on working.
	ppkit::DaemonClient e = std::move(d);
	CHECK(e.request({{"cmd", "status"}})["ok"] == true);
}

TEST_CASE("DaemonClient without a daemon", "[ppctld][api][socket]")
{
	SockDir dir;
	std::string what;
	CHECK(error_code([&] { ppkit::DaemonClient d(dir.path("nobody.sock"), 500ms); }, &what) ==
	      ppkit::Errc::DaemonMissing);
	CHECK_THAT(what, Catch::Contains("ppctld"));
	CHECK_THAT(what, Catch::Contains(dir.path("nobody.sock")));

	// A socket file nobody listens on.
	{
		Fd l(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
		sockaddr_un sa = address(dir.path("nobody.sock"));
		REQUIRE(bind(l.get(), reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0);
	}
	CHECK(error_code([&] { ppkit::DaemonClient d(dir.path("nobody.sock"), 500ms); }, &what) ==
	      ppkit::Errc::DaemonMissing);
	CHECK_THAT(what, Catch::Contains("ppctld"));
}

TEST_CASE("api server: a pool whose names are not UTF-8", "[ppctld][api][socket]")
{
	// root can name an interface with any bytes: the reply is still JSON
	// (U+FFFD for each bad byte) and the server goes on.
	SockDir dir;
	Served s(dir.path("api.sock"));
	ppkit::Pool p = pool(5);
	p.ifname = "eth\xff\xfe";
	p.owner = "drv\xc3";
	s.f.store.on_pools(Source::Ppkit, {pool(3), pool(4), p});
	s.f.store.on_stats(Source::Ppkit, {stats(5, 10, 1)}, s.f.epoch + 20s,
			   kEpochRealtime + 20'000'000'000ULL);
	s.f.store.publish();
	Client c(s.srv.path());
	c.send_all("{\"cmd\": \"pools\"}\n{\"cmd\": \"history\", \"pool\": 5}\n");
	auto r = s.reply(c);
	REQUIRE(r);
	REQUIRE(r->is_object());
	CHECK((*r)["ok"] == true);
	bool found = false;
	for (const json &row : (*r)["pools"])
		if (row["id"] == 5) {
			found = true;
			CHECK(row["ifname"] == "eth\xef\xbf\xbd\xef\xbf\xbd");
			CHECK(row["owner"] == "drv\xef\xbf\xbd");
		}
	CHECK(found);
	r = s.reply(c);
	REQUIRE(r);
	REQUIRE(r->is_object());
	CHECK((*r)["pool"]["ifname"] == "eth\xef\xbf\xbd\xef\xbf\xbd");
	c.send_all("{\"cmd\": \"status\"}\n");
	r = s.reply(c);
	REQUIRE(r);
	CHECK((*r)["ok"] == true);
}

TEST_CASE("api server: pipelined requests wait while their replies are not read",
	  "[ppctld][api][socket]")
{
	// 200 pools make a "pools" reply of about 100 KB: 16 pipelined
	// requests would be 1.6 MB of replies, against a bound of 512 KiB
	// for the client.  The server answers until that much waits for
	// the client, then stops reading it; as the client reads, the rest
	// are answered.  (The default bound, 4 MiB, would take 40 such
	// replies: under ASan on a loaded host, 100 of them took more than
	// 20 s to produce.)
	SockDir dir;
	ApiLimits lim;
	lim.client_pending = 512 << 10;
	Served s(dir.path("api.sock"), 16, lim);
	const std::size_t one = many_pools(s, 200);
	REQUIRE(one > 90'000);

	Client c(s.srv.path());
	const int n = 16;
	std::string reqs;
	for (int i = 0; i < n; i++)
		reqs += "{\"cmd\": \"pools\"}\n";
	c.send_all(reqs);
	s.settle(300);
	CHECK(s.srv.clients() == 1);
	CHECK(s.srv.peak_pending() > lim.client_pending);
	CHECK(s.srv.peak_pending() <= lim.client_pending + one);

	// Every request is answered, in order, once the client reads.
	int replies = 0;
	auto deadline = Clock::now() + 20s;
	while (replies < n && Clock::now() < deadline) {
		// the whole 20 s for any one reply: a 100 KB reply under
		// ASan on a loaded host took more than 2 s
		auto r = s.reply(c, deadline - Clock::now());
		if (!r)
			break;
		CHECK((*r)["pools"].size() == 201);	// and netdev pool 3
		replies++;
	}
	CHECK(replies == n);
	CHECK(s.srv.peak_pending() <= lim.client_pending + one);
	CHECK_FALSE(c.eof());
}

TEST_CASE("api server: 64 clients pipelining without reading: the total is bounded",
	  "[ppctld][api][socket]")
{
	// 20 pools make a "pools" reply of about 10 KB.  Each of 64 clients
	// asks 30 times (more than its socket holds) and reads nothing: 19 MB
	// of replies unbounded, 64 x the client bound (32 KiB) without a
	// total.  With a total of 128 KiB, at most one reply more waits, and
	// every reply still comes once the clients read.
	SockDir dir;
	ApiLimits lim;
	lim.client_pending = 32 << 10;
	lim.total_pending = 128 << 10;
	Served s(dir.path("api.sock"), 64, lim);
	const std::size_t one = many_pools(s, 20);
	REQUIRE(one > 8'000);

	std::vector<std::unique_ptr<Client>> cs;
	std::string reqs;
	for (int i = 0; i < 30; i++)
		reqs += "{\"cmd\": \"pools\"}\n";
	for (int i = 0; i < 64; i++) {
		cs.push_back(std::make_unique<Client>(s.srv.path()));
		cs.back()->send_all(reqs);
		s.settle(5);
	}
	s.settle(300);
	CHECK(s.srv.clients() == 64);
	CHECK(s.srv.peak_total() <= lim.total_pending + one);
	CHECK(s.srv.peak_pending() <= lim.client_pending + one);

	// every request answered, in order, as the clients read
	std::vector<int> replies(64);
	// 1,920 replies: a minute for ASan on a loaded host
	auto deadline = Clock::now() + 60s;
	bool all = false;
	while (!all && Clock::now() < deadline) {
		pump(s.srv, s.f.store, s.f.info, 5);
		all = true;
		for (int i = 0; i < 64; i++) {
			cs[i]->read_some();
			while (auto l = cs[i]->take_line())
				replies[i] += json::parse(*l)["ok"] == true;
			all = all && replies[i] == 30;
		}
	}
	CHECK(std::count(replies.begin(), replies.end(), 30) == 64);
	CHECK(s.srv.peak_total() <= lim.total_pending + one);
	CHECK(s.srv.pending() == 0);
}

TEST_CASE("api server: silent clients make room, unread replies are hung up",
	  "[ppctld][api][socket]")
{
	SockDir dir;
	ApiLimits lim;
	lim.client_pending = 16 << 10;
	lim.idle_evict = 200ms;
	lim.stalled = 300ms;
	Served s(dir.path("api.sock"), 4, lim);

	// four that connect and say nothing fill the server: a fifth, once
	// they have been silent for idle_evict, takes the oldest's place
	std::vector<std::unique_ptr<Client>> silent;
	for (int i = 0; i < 4; i++) {
		silent.push_back(std::make_unique<Client>(s.srv.path()));
		s.settle(10);
	}
	CHECK(s.srv.clients() == 4);
	s.settle(250);
	Client top(s.srv.path());
	top.send_all("{\"cmd\": \"status\"}\n");
	auto r = s.reply(top);
	REQUIRE(r);
	CHECK((*r)["ok"] == true);
	CHECK(s.srv.clients() == 4);
	CHECK(s.hung_up(*silent[0]));

	// one that asks and never reads: hung up once its replies waited
	// `stalled`, and its bytes are no longer counted
	Client greedy(s.srv.path());
	std::string reqs;
	for (int i = 0; i < 3000; i++)	// more replies than the socket holds
		reqs += "{\"cmd\": \"status\"}\n";
	greedy.send_all(reqs);
	auto deadline = Clock::now() + 5s;
	while (s.srv.pending() == 0 && Clock::now() < deadline)
		pump(s.srv, s.f.store, s.f.info, 5);
	CHECK(s.srv.pending() > 0);
	deadline = Clock::now() + 5s;
	while (s.srv.pending() > 0 && Clock::now() < deadline)
		pump(s.srv, s.f.store, s.f.info, 20);
	CHECK(s.srv.pending() == 0);
	CHECK(Clock::now() < deadline);
	// the one that reads is still served
	top.send_all("{\"cmd\": \"status\"}\n");
	r = s.reply(top);
	REQUIRE(r);
	CHECK((*r)["ok"] == true);
}

