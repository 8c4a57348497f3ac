// SPDX-License-Identifier: GPL-2.0
#include "ppkit/daemon.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ppkit/error.h"

namespace ppkit {

namespace {

// Wait for @events on @fd until @deadline; false on timeout.
bool wait_for(int fd, short events, std::chrono::steady_clock::time_point deadline)
{
	for (;;) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
			deadline - std::chrono::steady_clock::now());
		if (left.count() <= 0)
			return false;
		pollfd p{fd, events, 0};
		int n = poll(&p, 1, static_cast<int>(left.count()));
		if (n > 0)
			return true;
		if (n < 0 && errno != EINTR)
			throw Error(Errc::System, "poll on the ppctld socket failed", errno);
	}
}

}  // namespace

DaemonClient::DaemonClient(std::string path, std::chrono::milliseconds timeout)
	: path_(std::move(path)), timeout_(timeout)
{
	sockaddr_un sa{};
	sa.sun_family = AF_UNIX;
	if (path_.empty() || path_.size() >= sizeof(sa.sun_path))
		throw Error(Errc::System, fmt::format("ppctld socket path '{}' is empty or too long", path_));
	std::memcpy(sa.sun_path, path_.data(), path_.size());
	fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd_ < 0)
		throw Error(Errc::System, "cannot open a Unix socket", errno);
	if (connect(fd_, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) < 0) {
		int e = errno;
		close(fd_);
		fd_ = -1;
		if (e == EACCES || e == EPERM)
			throw Error(Errc::Permission,
				    fmt::format("no access to ppctld's socket {}: run as root, or set "
						"socket-mode/socket-group in ppctld's configuration",
						path_),
				    e);
		throw Error(Errc::DaemonMissing,
			    fmt::format("ppctld is not running (nothing listens on {})", path_),
			    e);
	}
}

DaemonClient::~DaemonClient()
{
	if (fd_ >= 0)
		close(fd_);
}

DaemonClient::DaemonClient(DaemonClient &&o) noexcept
	: path_(std::move(o.path_)), fd_(std::exchange(o.fd_, -1)), timeout_(o.timeout_),
	  inbuf_(std::move(o.inbuf_))
{
}

DaemonClient &DaemonClient::operator=(DaemonClient &&o) noexcept
{
	if (this != &o) {
		if (fd_ >= 0)
			close(fd_);
		path_ = std::move(o.path_);
		fd_ = std::exchange(o.fd_, -1);
		timeout_ = o.timeout_;
		inbuf_ = std::move(o.inbuf_);
	}
	return *this;
}

nlohmann::json DaemonClient::request(const nlohmann::json &req)
{
	if (fd_ < 0)
		throw Error(Errc::System, "ppctld connection already closed");
	auto deadline = std::chrono::steady_clock::now() + timeout_;
	std::string line = req.dump() + "\n";
	std::size_t off = 0;
	while (off < line.size()) {
		ssize_t n = send(fd_, line.data() + off, line.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (!wait_for(fd_, POLLOUT, deadline))
				throw Error(Errc::System, "ppctld did not take the request in time");
			continue;
		}
		if (n < 0)
			throw Error(Errc::System, "sending to ppctld failed", errno);
		off += static_cast<std::size_t>(n);
	}
	for (;;) {
		auto nl = inbuf_.find('\n');
		if (nl != std::string::npos) {
			std::string reply = inbuf_.substr(0, nl);
			inbuf_.erase(0, nl + 1);
			nlohmann::json j = nlohmann::json::parse(reply, nullptr, false);
			if (j.is_discarded() || !j.is_object() || !j.contains("ok") || !j["ok"].is_boolean())
				throw Error(Errc::Protocol, "ppctld sent a reply that is not a JSON object");
			if (!j["ok"].get<bool>())
				throw Error(Errc::Daemon,
					    "ppctld: " + j.value("error", std::string("request refused")));
			return j;
		}
		if (!wait_for(fd_, POLLIN, deadline))
			throw Error(Errc::System, "ppctld did not answer in time");
		char buf[65536];
		ssize_t n = recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			throw Error(Errc::System, "reading from ppctld failed", errno);
		if (n == 0)
			throw Error(Errc::System, "ppctld closed the connection before it answered");
		inbuf_.append(buf, static_cast<std::size_t>(n));
	}
}

std::optional<double> parse_duration(std::string_view s)
{
	double v = 0;
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
	if (ec != std::errc() || p == s.data() || !std::isfinite(v) || v < 0)
		return std::nullopt;
	std::string_view unit(p, static_cast<std::size_t>(s.data() + s.size() - p));
	double mul = 0;
	if (unit.empty() || unit == "s")
		mul = 1;
	else if (unit == "ms")
		mul = 1e-3;
	else if (unit == "m")
		mul = 60;
	else if (unit == "h")
		mul = 3600;
	else if (unit == "d")
		mul = 86400;
	else
		return std::nullopt;
	return v * mul;
}

}  // namespace ppkit
