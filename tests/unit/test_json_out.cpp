// SPDX-License-Identifier: GPL-2.0
// -p/--pretty and JSON errors: what ppctl writes on stdout under --json
// (Documentation/ppctl.rst, JSON).
#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "json_out.h"

using namespace ppctl;
using nlohmann::json;

namespace {

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

// A JSON error on stdout, nothing on stderr, the usual exit status.
json json_error(const RunResult &r, int exit)
{
	INFO("stdout: " << r.out << "\nstderr: " << r.err);
	CHECK(r.exit == exit);
	CHECK(r.err.empty());
	json j = json::parse(r.out);
	CHECK(j.size() == 3);
	CHECK(j["error"].is_string());
	CHECK(j.contains("errno"));
	CHECK(j.contains("extack"));
	return j;
}

}  // namespace

TEST_CASE("pretty: each document re-indented, four spaces", "[json][cli]")
{
	std::ostringstream to;
	{
		PrettyJsonBuf buf(to);
		std::ostream o(&buf);
		o << R"({"a":1,"b":[true,null]})" << "\n";
		// A document written in pieces, as write_doc() flushes 64 KiB ones.
		o << R"({"c":)";
		o << R"("d"})" << "\n";
		o << "not json\n";
		o << R"({"e":)";	// unfinished: written as is at the end
	}
	CHECK(to.str() == "{\n    \"a\": 1,\n    \"b\": [\n        true,\n        null\n    ]\n}\n"
			  "{\n    \"c\": \"d\"\n}\n"
			  "not json\n"
			  "{\"e\":\n");
}

TEST_CASE("pretty: a flush reaches the real stream (monitor, stats -i)", "[json][cli]")
{
	std::ostringstream to;
	PrettyJsonBuf buf(to);
	std::ostream o(&buf);
	o << R"({"event":"add"})" << "\n" << std::flush;
	CHECK(to.str() == "{\n    \"event\": \"add\"\n}\n");
}

TEST_CASE("error documents: message, errno and extack, null when none", "[json][cli]")
{
	json j = json::parse(error_doc("no pool 42 (see ppctl list); kernel: no such pool", 2,
				       "no such pool", false));
	CHECK(j == json{{"error", "no pool 42 (see ppctl list); kernel: no such pool"},
			{"errno", 2},
			{"extack", "no such pool"}});
	std::string one = error_doc("bad", 0, {}, false);
	CHECK(one == "{\"errno\":null,\"error\":\"bad\",\"extack\":null}\n");
	CHECK(error_doc("bad", 0, {}, true) ==
	      "{\n    \"errno\": null,\n    \"error\": \"bad\",\n    \"extack\": null\n}\n");
}

TEST_CASE("under --json, errors are JSON on stdout, exit codes unchanged", "[json][cli]")
{
	// CLI11's refusal (usage, exit 1), with -j anywhere or in a cluster.
	json a = json_error(run_args({"-j", "frobnicate"}), kExitUsage);
	CHECK_THAT(a["error"].get<std::string>(), Catch::Contains("frobnicate"));
	CHECK(a["errno"].is_null());
	CHECK(a["extack"].is_null());
	json_error(run_args({"stats", "0", "--json"}), kExitUsage);
	json_error(run_args({"-rj", "list", "--bogus"}), kExitUsage);
	// ppctl's own usage checks.
	json b = json_error(run_args({"-j", "set", "3"}), kExitUsage);
	CHECK_THAT(b["error"].get<std::string>(), Catch::Contains("--ring-size"));
	// Found at run time: an unknown interface.
	json c = json_error(run_args({"--json", "stats", "--dev", "ppkit-no-such-if0"}), kExitUsage);
	CHECK(c["error"] == "no interface 'ppkit-no-such-if0' (see ip link)");
	// libppkit's error (exit 2) with its errno: nothing listens there.
	json d = json_error(run_args({"-j", "history", "3", "--socket", "/nonexistent/ppctld.sock"}),
			    kExitKernel);
	CHECK_THAT(d["error"].get<std::string>(), Catch::Contains("ppctld is not running"));
	CHECK(d["errno"].is_number_integer());
	// Without --json: text on stderr, as before.
	RunResult t = run_args({"history", "3", "--socket", "/nonexistent/ppctld.sock"});
	CHECK(t.exit == kExitKernel);
	CHECK(t.out.empty());
	CHECK_THAT(t.err, Catch::StartsWith("ppctl: ppctld is not running"));
	// --help stays help.
	RunResult h = run_args({"-j", "--help"});
	CHECK(h.exit == kExitOk);
	CHECK_THAT(h.out, Catch::Contains("Usage"));
}

TEST_CASE("-p implies --json and indents errors too", "[json][cli]")
{
	RunResult r = run_args({"-p", "history", "3", "--socket", "/nonexistent/ppctld.sock"});
	json_error(r, kExitKernel);
	CHECK_THAT(r.out, Catch::StartsWith("{\n    \"errno\": "));
	RunResult u = run_args({"--pretty", "frobnicate"});
	json_error(u, kExitUsage);
	CHECK_THAT(u.out, Catch::StartsWith("{\n    \""));
}
