// SPDX-License-Identifier: GPL-2.0
// ppctld's settings: the command line, the configuration file, and the
// durations both are written in.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "config.h"
#include "ppkit/daemon.h"

using namespace ppctld;

namespace {

// A directory of its own, removed with what it holds.
class TempDir {
public:
	TempDir()
	{
		std::string t = (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
		t += "/ppctld-config-XXXXXX";
		std::vector<char> buf(t.begin(), t.end());
		buf.push_back('\0');
		REQUIRE(mkdtemp(buf.data()));
		path_ = buf.data();
	}
	~TempDir()
	{
		for (const std::string &f : files_)
			unlink(f.c_str());
		rmdir(path_.c_str());
	}
	TempDir(const TempDir &) = delete;
	TempDir &operator=(const TempDir &) = delete;

	std::string file(const std::string &name, const std::string &text)
	{
		std::string p = path_ + "/" + name;
		std::ofstream(p) << text;
		files_.push_back(p);
		return p;
	}
	std::string path(const std::string &name) const { return path_ + "/" + name; }

private:
	std::string path_;
	std::vector<std::string> files_;
};

struct Result {
	Parsed parsed;
	std::string out, err;
};

// Every test names a configuration file (an empty one unless it brings its
// own) so that a /etc/ppctld.conf on the machine changes nothing.
Result parse_args(std::vector<std::string> args, bool own_config = false)
{
	static TempDir dir;
	static const std::string empty = dir.file("empty.conf", "");
	if (!own_config) {
		args.insert(args.begin(), empty);
		args.insert(args.begin(), "--config");
	}
	args.insert(args.begin(), "ppctld");
	std::vector<const char *> argv;
	for (const std::string &a : args)
		argv.push_back(a.c_str());
	std::ostringstream out, err;
	Parsed p = parse(static_cast<int>(argv.size()), argv.data(), out, err);
	return {p, out.str(), err.str()};
}

Config parsed(std::vector<std::string> args, bool own_config = false)
{
	Result r = parse_args(std::move(args), own_config);
	INFO(r.err);
	REQUIRE(r.parsed.config);
	CHECK(r.parsed.exit == 0);
	return *r.parsed.config;
}

void refused(std::vector<std::string> args, const std::string &why, bool own_config = false)
{
	std::string line;
	for (const std::string &a : args)
		line += a + " ";
	INFO("ppctld " << line);
	Result r = parse_args(std::move(args), own_config);
	CHECK_FALSE(r.parsed.config);
	CHECK(r.parsed.exit == 1);
	CHECK_THAT(r.err, Catch::Contains(why));
}

}  // namespace

TEST_CASE("parse_duration", "[ppctld][config]")
{
	using ppkit::parse_duration;
	auto dur = [](const char *s) {
		INFO("'" << s << "'");
		auto v = parse_duration(s);
		REQUIRE(v);
		return *v;
	};
	CHECK(dur("90") == 90.0);
	CHECK(dur("0") == 0.0);
	CHECK(dur("1.5s") == 1.5);
	CHECK(dur("500ms") == Approx(0.5));
	CHECK(dur("100ms") == Approx(0.1));
	CHECK(dur("10m") == 600.0);
	CHECK(dur("2h") == 7200.0);
	CHECK(dur("1d") == 86400.0);
	CHECK(dur("0.5h") == 1800.0);

	for (const char *bad : {"", "s", "abc", "-1", "-1s", "10x", "10 s", " 10", "10s ", "1.5.3",
				"10mm", "1e999", "nan", "inf", "10S", "1h30m"}) {
		INFO("'" << bad << "'");
		CHECK_FALSE(parse_duration(bad));
	}
}

TEST_CASE("ppctld defaults", "[ppctld][config]")
{
	Config c = parsed({});
	CHECK(c.interval_s == 1.0);
	CHECK(c.history_s == 3600.0);
	CHECK(c.history_points() == 3600);
	CHECK(c.sources == std::vector<std::string>{"ppkit"});
	CHECK(c.listen == "127.0.0.1:9105");
	CHECK(c.socket == "/run/ppctld/ppctld.sock");
	CHECK(c.socket == ppkit::kDaemonSocket);
	CHECK(c.socket_mode == 0600);
	CHECK(c.socket_group.empty());
	CHECK(c.textfile.empty());
	CHECK(c.max_clients == 16);
	CHECK(c.alerts.hit_below == Approx(0.5));
	CHECK(c.alerts.hit_for_s == 30.0);
	CHECK(c.alerts.leak_for_s == 60.0);
	CHECK(c.alerts.leak_min_pages == 64);
	CHECK_FALSE(c.foreground);
	CHECK_FALSE(c.log_stderr);
	CHECK(c.pidfile.empty());
}

TEST_CASE("ppctld without a configuration file", "[ppctld][config]")
{
	// Only meaningful where there is no /etc/ppctld.conf, the default file.
	if (access(kDefaultConfig, F_OK) == 0) {
		SUCCEED("/etc/ppctld.conf exists here: not checked");
		return;
	}
	Result r = parse_args({}, true);
	REQUIRE(r.parsed.config);
	CHECK(r.parsed.config->interval_s == 1.0);
	// config.h: "" when none was read.
	CHECK(r.parsed.config->config_file.empty());
}

TEST_CASE("ppctld durations", "[ppctld][config]")
{
	Config c = parsed({"--interval", "500ms", "--history", "10m"});
	CHECK(c.interval_s == Approx(0.5));
	CHECK(c.history_s == 600.0);
	CHECK(c.history_points() == 1200);

	c = parsed({"-i", "2", "--history", "2h"});
	CHECK(c.interval_s == 2.0);
	CHECK(c.history_s == 7200.0);
	CHECK(c.history_points() == 3600);

	c = parsed({"--interval", "100ms", "--history", "1s"});
	CHECK(c.interval_s == Approx(0.1));
	CHECK(c.history_points() == 10);

	c = parsed({"--alert-hit-for", "0", "--alert-leak-for", "5m"});
	CHECK(c.alerts.hit_for_s == 0.0);
	CHECK(c.alerts.leak_for_s == 300.0);

	c = parsed({"--history", "7d", "--interval", "1h"});
	CHECK(c.history_s == 7 * 86400.0);
	CHECK(c.history_points() == 168);
}

TEST_CASE("ppctld refuses bad durations", "[ppctld][config]")
{
	refused({"--interval", "abc"}, "bad interval 'abc'");
	refused({"--interval", "-1s"}, "bad interval");
	refused({"--interval", "10x"}, "bad interval");
	refused({"--interval", ""}, "interval");
	refused({"--interval", "50ms"}, "bad interval '50ms'");
	refused({"--interval", "0.05"}, "bad interval");
	refused({"--interval", "0"}, "bad interval");
	refused({"--interval", "2h"}, "bad interval");
	refused({"--history", "1h30m"}, "bad history");
	refused({"--history", "500ms"}, "bad history");
	refused({"--history", "8d"}, "bad history");
	refused({"--alert-hit-for", "soon"}, "bad alert-hit-for");
	refused({"--alert-leak-for", "-5"}, "bad alert-leak-for");
}

TEST_CASE("ppctld refuses a history shorter than the interval", "[ppctld][config]")
{
	refused({"--interval", "10s", "--history", "5s"}, "shorter than --interval");
	// Equal is fine: one point.
	Config c = parsed({"--interval", "10s", "--history", "10s"});
	CHECK(c.history_points() == 1);
}

TEST_CASE("ppctld refuses a history of more than kMaxHistoryPoints points", "[ppctld][config]")
{
	// 7 days at 0.1 s would be 6,048,000 points, 138 MiB for each pool.
	refused({"--interval", "100ms", "--history", "7d"},
		"is 6048000 points per pool (138 MiB a pool); at most 86400 (2 MiB a pool)");
	refused({"--interval", "100ms", "--history", "7d"}, "--interval 7s or more");
	refused({"--interval", "100ms", "--history", "7d"}, "--history 144m or less");
	refused({"--history", "2d"}, "is 172800 points per pool");
	// The limit itself, and what the message proposes, are accepted.
	CHECK(parsed({"--history", "1d"}).history_points() == kMaxHistoryPoints);
	CHECK(parsed({"--interval", "7s", "--history", "7d"}).history_points() <= kMaxHistoryPoints);
	CHECK(parsed({"--interval", "100ms", "--history", "144m"}).history_points() ==
	      kMaxHistoryPoints);
}

TEST_CASE("ppctld socket mode", "[ppctld][config]")
{
	CHECK(parsed({"--socket-mode", "0660"}).socket_mode == 0660);
	CHECK(parsed({"--socket-mode", "666"}).socket_mode == 0666);
	CHECK(parsed({"--socket-mode", "0"}).socket_mode == 0);
	CHECK(parsed({"--socket-mode", "0777"}).socket_mode == 0777);
	refused({"--socket-mode", "0999"}, "bad socket mode '0999'");
	refused({"--socket-mode", "abc"}, "bad socket mode 'abc'");
	refused({"--socket-mode", "01000"}, "bad socket mode");
	refused({"--socket-mode", "0660x"}, "bad socket mode");
	refused({"--socket-mode", "-1"}, "bad socket mode");
}

TEST_CASE("ppctld listen addresses", "[ppctld][config]")
{
	CHECK(parsed({"--listen", "[::1]:9105"}).listen == "[::1]:9105");
	CHECK(parsed({"--listen", "localhost:1"}).listen == "localhost:1");
	CHECK(parsed({"--listen", "127.0.0.1:65535"}).listen == "127.0.0.1:65535");
	refused({"--listen", "127.0.0.1"}, "bad listen address '127.0.0.1': expected ADDR:PORT");
	refused({"--listen", "127.0.0.1:99999"}, "bad listen address");
	refused({"--listen", "127.0.0.1:0"}, "bad listen address");
	refused({"--listen", ":9105"}, "bad listen address");
	refused({"--listen", "127.0.0.1:"}, "bad listen address");
	refused({"--listen", "127.0.0.1:91a5"}, "bad listen address");
	refused({"--listen", "a b:9105"}, "bad listen address");
	refused({"--listen", "[zz]:9105"}, "bad listen address");
	refused({"--listen", std::string(300, '9') + ":1"}, "...': expected ADDR:PORT");
}

TEST_CASE("ppctld endpoints, sources and the rest", "[ppctld][config]")
{
	Config c = parsed({"--listen", "none", "--socket", "none"});
	CHECK(c.listen.empty());
	CHECK(c.socket.empty());

	c = parsed({"-l", "0.0.0.0:9200", "--socket", "/tmp/x.sock", "--socket-group", "ppkit",
		    "--textfile", "/var/lib/node_exporter/ppkit.prom", "--max-clients", "4",
		    "--pidfile", "/run/ppctld.pid"});
	CHECK(c.listen == "0.0.0.0:9200");
	CHECK(c.socket == "/tmp/x.sock");
	CHECK(c.socket_group == "ppkit");
	CHECK(c.textfile == "/var/lib/node_exporter/ppkit.prom");
	CHECK(c.max_clients == 4);
	CHECK(c.pidfile == "/run/ppctld.pid");

	CHECK(parsed({"--source", "all"}).sources == std::vector<std::string>{"ppkit", "netdev"});
	CHECK(parsed({"-s", "netdev"}).sources == std::vector<std::string>{"netdev"});
	CHECK(parsed({"--source", "ppkit"}).sources == std::vector<std::string>{"ppkit"});
	refused({"--source", "kernel"}, "kernel");

	refused({"--max-clients", "0"}, "max-clients");
	refused({"--max-clients", "5000"}, "max-clients");

	c = parsed({"--alert-hit-below", "80"});
	CHECK(c.alerts.hit_below == Approx(0.8));
	CHECK(parsed({"--alert-hit-below", "0"}).alerts.hit_below == 0.0);
	refused({"--alert-hit-below", "150"}, "alert-hit-below");
	CHECK(parsed({"--alert-leak-min-pages", "1000"}).alerts.leak_min_pages == 1000);
	refused({"--alert-leak-min-pages", "0"}, "alert-leak-min-pages");

	c = parsed({"-f"});
	CHECK(c.foreground);
	CHECK(c.log_stderr);
	c = parsed({"--log-stderr"});
	CHECK_FALSE(c.foreground);
	CHECK(c.log_stderr);

	refused({"--no-such-option"}, "no-such-option");
	refused({"extra"}, "extra");
}

TEST_CASE("ppctld --help", "[ppctld][config]")
{
	Result r = parse_args({"--help"});
	CHECK_FALSE(r.parsed.config);
	CHECK(r.parsed.exit == 0);
	CHECK_THAT(r.out, Catch::Contains("--interval"));
	CHECK_THAT(r.out, Catch::Contains("--socket-mode"));
}

TEST_CASE("ppctld reads its configuration file", "[ppctld][config]")
{
	TempDir dir;
	std::string conf = dir.file("ppctld.conf",
				    "# a comment\n"
				    "interval = \"2s\"\n"
				    "history = \"10m\"\n"
				    "source = \"all\"\n"
				    "listen = \"none\"\n"
				    "socket = \"/tmp/ppctld-test.sock\"\n"
				    "socket-mode = \"0660\"\n"
				    "max-clients = 3\n"
				    "alert-hit-below = 80\n"
				    "alert-leak-min-pages = 128\n");

	SECTION("as it is")
	{
		Config c = parsed({"--config", conf}, true);
		CHECK(c.config_file == conf);
		CHECK(c.interval_s == 2.0);
		CHECK(c.history_s == 600.0);
		CHECK(c.history_points() == 300);
		CHECK(c.sources == std::vector<std::string>{"ppkit", "netdev"});
		CHECK(c.listen.empty());
		CHECK(c.socket == "/tmp/ppctld-test.sock");
		CHECK(c.socket_mode == 0660);
		CHECK(c.max_clients == 3);
		CHECK(c.alerts.hit_below == Approx(0.8));
		CHECK(c.alerts.leak_min_pages == 128);
		// What the file does not set keeps its default.
		CHECK(c.alerts.hit_for_s == 30.0);
	}
	SECTION("a flag wins over the file")
	{
		Config c = parsed({"--interval", "5s", "-c", conf, "--socket-mode", "0600"}, true);
		CHECK(c.interval_s == 5.0);
		CHECK(c.socket_mode == 0600);
		CHECK(c.history_s == 600.0);	// from the file
	}
	SECTION("a file the flags make inconsistent")
	{
		refused({"--config", conf, "--history", "1s"}, "shorter than --interval", true);
	}
}

TEST_CASE("ppctld refuses a bad configuration file", "[ppctld][config]")
{
	TempDir dir;
	SECTION("an unknown key")
	{
		std::string conf = dir.file("bad.conf", "interval = \"2s\"\nintervall = \"3s\"\n");
		refused({"--config", conf}, "intervall", true);
	}
	SECTION("a bad value")
	{
		std::string conf = dir.file("bad.conf", "interval = \"fast\"\n");
		refused({"--config", conf}, "bad interval 'fast'", true);
	}
	SECTION("a bad socket mode")
	{
		std::string conf = dir.file("bad.conf", "socket-mode = \"0999\"\n");
		refused({"--config", conf}, "bad socket mode", true);
	}
	SECTION("a missing file named on the command line")
	{
		std::string missing = dir.path("missing.conf");
		refused({"--config", missing}, "missing.conf", true);
	}
}

TEST_CASE("ppctld --version prints ppkit's version and exits 0", "[ppctld][config]")
{
	Result r = parse_args({"--version"});
	CHECK_FALSE(r.parsed.config);
	CHECK(r.parsed.exit == 0);
	CHECK(r.out == std::string(PPKIT_VERSION) + "\n");
}
