// SPDX-License-Identifier: GPL-2.0
// libppkit: the ppctld API, a Unix stream socket that speaks one JSON object
// per line (Documentation/ppctld.rst has every request and reply).
//
//   ppkit::DaemonClient d;                     // Error(DaemonMissing) if none
//   nlohmann::json r = d.request({{"cmd", "pools"}});
//
// A reply is {"ok": true, ...} or {"ok": false, "error": "..."}; request()
// throws Error(Daemon) with the daemon's message for the latter.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ppkit {

// Where ppctld listens unless told otherwise (ppctld --socket, ppctl --socket):
// in the directory systemd makes for the service (RuntimeDirectory=ppctld),
// owned by its user; ppctld makes it when started by hand.
inline constexpr std::string_view kDaemonSocket = "/run/ppctld/ppctld.sock";
// The longest request line the daemon reads, newline included.
inline constexpr std::size_t kDaemonMaxRequest = 4096;
// Bumped whenever a reply field changes meaning or goes away.
inline constexpr int kDaemonApiVersion = 1;

class DaemonClient {
public:
	// Connects to @path.  Error(DaemonMissing) if nothing listens there,
	// Error(Permission) if the socket's mode keeps us out.
	explicit DaemonClient(std::string path = std::string(kDaemonSocket),
			      std::chrono::milliseconds timeout = std::chrono::seconds(5));
	~DaemonClient();
	DaemonClient(DaemonClient &&) noexcept;
	DaemonClient &operator=(DaemonClient &&) noexcept;

	const std::string &path() const { return path_; }
	// One request, its reply.  Error(Daemon) for an {"ok": false} reply,
	// Error(System) if the daemon hangs up or does not answer in time.
	nlohmann::json request(const nlohmann::json &req);

private:
	std::string path_;
	int fd_ = -1;
	std::chrono::milliseconds timeout_;
	std::string inbuf_;
};

// "90", "1.5s", "500ms", "10m", "2h", "1d" -> seconds; nothing for anything
// else, negative values included.
std::optional<double> parse_duration(std::string_view s);

}  // namespace ppkit
