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
// one also closes the connection.  The server never blocks, and what its
// clients cost is bounded (ApiLimits): once client_pending bytes of replies
// wait for a client, it answers no more of its requests and stops reading
// from it until the client reads; once total_pending bytes wait for all of
// them together, it answers no one until they drain (at most one reply
// past either bound).  A client whose replies wait unread for `stalled` is
// hung up; at max_clients, a new client takes the place of the one silent
// longest, if silent for idle_evict.
#pragma once

#include <chrono>
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

// The reply to one request line (without its newline), as the line sent:
// JSON and a newline.
std::string reply_line(std::string_view line, const Store &store, const ApiInfo &info);
// The same reply, parsed.
nlohmann::json handle_request(std::string_view line, const Store &store, const ApiInfo &info);

// A pool row as the API and `ppctl top` show it.
nlohmann::json row_json(const Row &r);

struct ApiLimits {
	std::size_t client_pending = 4 << 20;	// reply bytes waiting for one client
	std::size_t total_pending = 32 << 20;	// ... for all of them
	std::chrono::milliseconds stalled{30000};	// replies unread this long: hung up
	std::chrono::milliseconds idle_evict{5000};	// silent this long: room for another
};

class ApiServer {
public:
	using Clock = std::chrono::steady_clock;
	static constexpr std::size_t kMaxPending = ApiLimits{}.client_pending;

	// Listens on @path (a stale socket there is replaced) with @mode, and
	// group @group if not empty.  A missing directory of @path whose parent
	// exists is made (0755) and, if empty, removed with the socket.  Throws
	// std::system_error.
	ApiServer(std::string path, unsigned mode, const std::string &group, std::size_t max_clients,
		  ApiLimits limits = {});
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
	// Hang up on the clients whose replies waited unread for limits.stalled;
	// the caller's loop calls it at least every expire_every().
	void expire(Clock::time_point now = Clock::now());
	static constexpr std::chrono::milliseconds expire_every() { return std::chrono::seconds(1); }
	std::size_t clients() const { return clients_.size(); }
	// The most reply bytes that ever waited for one client, for all.
	std::size_t peak_pending() const { return peak_pending_; }
	std::size_t peak_total() const { return peak_total_; }
	std::size_t pending() const { return pending_; }

private:
	struct Conn {
		Fd fd;
		std::string in, out;
		bool closing = false;	// close once @out is sent
		Clock::time_point active;	// accepted, or last read or sent
		Clock::time_point waiting;	// since when @out is not empty
	};
	bool full(const Conn &c) const
	{
		return c.out.size() >= limits_.client_pending || pending_ >= limits_.total_pending;
	}
	void answer(Conn &c, const Store &store, const ApiInfo &info);
	void progress(Conn &c, const Store &store, const ApiInfo &info);
	void reply(Conn &c, const std::string &line);
	void accept_all();
	bool make_room();
	void flush(Conn &c);
	void drop(int fd);

	// The directory made for the socket, removed if empty when the server
	// goes (or its constructor throws).
	struct MadeDir {
		std::string path;
		MadeDir() = default;
		MadeDir(const MadeDir &) = delete;
		MadeDir &operator=(const MadeDir &) = delete;
		~MadeDir();
	};

	std::string path_;
	MadeDir made_dir_;
	Fd fd_;
	std::size_t max_clients_;
	ApiLimits limits_;
	std::vector<std::unique_ptr<Conn>> clients_;
	std::size_t pending_ = 0;	// reply bytes waiting, all clients
	std::size_t peak_pending_ = 0, peak_total_ = 0;
};

}  // namespace ppctld
