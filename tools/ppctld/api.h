// SPDX-License-Identifier: GPL-2.0
// ppctld: the JSON API on a Unix stream socket.  One request per line, one
// reply per line (Documentation/ppctld.rst):
//
//   {"cmd": "status"}
//   {"cmd": "pools"}                                   every live pool, last window
//   {"cmd": "history", "pool": 3, "since_s": 600}      optional "source": "ppkit"
//
// Requests longer than ppkit::kDaemonMaxRequest, malformed JSON, unknown
// commands and bad arguments get {"ok": false, "error": "..."}; an oversized
// one also closes the connection.  The server never blocks: once
// kMaxPending bytes of replies wait for a client, it answers no more of its
// requests and stops reading from it until the client reads (at most one
// reply past the bound waits for each client).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fd.h"
#include "store.h"

namespace ppctld {

struct ApiInfo {
	double interval_s = 1;
	double history_s = 3600;
	std::uint64_t started_realtime_ns = 0;
	int pid = 0;
};

// The reply to one request line (without its newline).
nlohmann::json handle_request(std::string_view line, const Store &store, const ApiInfo &info);

// A pool row as the API and `ppctl top` show it.
nlohmann::json row_json(const Row &r);

class ApiServer {
public:
	static constexpr std::size_t kMaxPending = 4 << 20;

	// Listens on @path (a stale socket there is replaced) with @mode, and
	// group @group if not empty.  Throws std::system_error.
	ApiServer(std::string path, unsigned mode, const std::string &group, std::size_t max_clients);
	~ApiServer();
	ApiServer(const ApiServer &) = delete;
	ApiServer &operator=(const ApiServer &) = delete;

	// New permissions and client limit for the socket it listens on (a
	// reload that keeps the path).  Throws std::system_error, having changed
	// nothing, when @group does not exist.
	void reconfigure(unsigned mode, const std::string &group, std::size_t max_clients);

	const std::string &path() const { return path_; }
	// The descriptors to poll and what for.
	struct Watch {
		int fd;
		short events;
	};
	std::vector<Watch> watches() const;
	// Serve whatever @fd has become ready for (accept, read, write).
	void serve(int fd, short revents, const Store &store, const ApiInfo &info);
	std::size_t clients() const { return clients_.size(); }
	// The most reply bytes that ever waited for one client.
	std::size_t peak_pending() const { return peak_pending_; }

private:
	struct Conn {
		Fd fd;
		std::string in, out;
		bool closing = false;	// close once @out is sent
	};
	static bool full(const Conn &c) { return c.out.size() >= kMaxPending; }
	void answer(Conn &c, const Store &store, const ApiInfo &info);
	void accept_all();
	void flush(Conn &c);
	void drop(int fd);

	std::string path_;
	Fd fd_;
	std::size_t max_clients_;
	std::vector<std::unique_ptr<Conn>> clients_;
	std::size_t peak_pending_ = 0;
};

}  // namespace ppctld
