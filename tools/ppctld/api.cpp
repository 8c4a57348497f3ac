// SPDX-License-Identifier: GPL-2.0
#include "api.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include <grp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <fmt/format.h>

#include "ppkit/daemon.h"
#include "ppkit/json_writer.h"

namespace ppctld {

namespace {

using nlohmann::json;

// One reply line.  Never throws on invalid UTF-8: a pool's names are
// whatever bytes the kernel holds (root can name an interface "\xff"); a
// bad byte is written as U+FFFD.
std::string line_of(const json &reply)
{
	return reply.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

json error(std::string msg)
{
	return {{"ok", false}, {"error", std::move(msg)}};
}

json opt_num(const std::optional<double> &v)
{
	return v ? json(*v) : json(nullptr);
}

template <typename T>
json opt(const std::optional<T> &v)
{
	return v ? json(*v) : json(nullptr);
}

json pool_head(const ppkit::Pool &p)
{
	return {
		{"id", p.id},
		{"source", ppkit::to_string(p.source)},
		{"owner", p.owner},
		{"ifindex", opt(p.ifindex)},
		{"ifname", p.ifname.empty() ? json(nullptr) : json(p.ifname)},
		{"queue", opt(p.queue)},
		{"napi_id", opt(p.napi_id)},
		{"state", p.state()},
	};
}

std::optional<ppkit::Source> source_arg(const json &req, std::string &why)
{
	if (!req.contains("source"))
		return ppkit::Source::Ppkit;
	const json &s = req["source"];
	if (s.is_string())
		if (auto src = ppkit::source_by_name(s.get<std::string>()))
			return src;
	why = "bad \"source\": expected \"ppkit\" or \"netdev\"";
	return std::nullopt;
}

json status(const Store &store, const ApiInfo &info)
{
	auto snap = store.snapshot();
	json backends = json::array();
	for (const BackendState &b : snap->backends)
		backends.push_back({{"source", ppkit::to_string(b.source)},
				    {"up", b.up},
				    {"error", b.up ? json(nullptr) : json(b.why)}});
	return {
		{"ok", true},
		{"version", ppkit::kDaemonApiVersion},
		{"pid", info.pid},
		{"interval_s", info.interval_s},
		{"history_s", info.history_s},
		{"started_ns", info.started_realtime_ns},
		{"samples", snap->samples},
		{"sample_errors", snap->sample_errors},
		{"last_sample_s", snap->last_sample_s},
		{"pools", snap->rows.size()},
		{"gone_pools", snap->gone_pools},
		{"history_bytes", snap->history_bytes},
		{"backends", std::move(backends)},
	};
}

json pools(const Store &store, const ApiInfo &info)
{
	auto snap = store.snapshot();
	json rows = json::array();
	for (const Row &r : snap->rows)
		rows.push_back(row_json(r));
	return {{"ok", true},
		{"version", ppkit::kDaemonApiVersion},
		{"interval_s", info.interval_s},
		{"time_ns", snap->realtime_ns},
		{"pools", std::move(rows)}};
}

std::optional<double> point_num(float v)
{
	return std::isnan(v) ? std::nullopt : std::optional<double>(v);
}

// The history reply, written as it is produced: a history holds up to
// history_s / interval_s points (86,400 for a day at 1 s), and a DOM of
// those held 63.6 MB (nlohmann 3.11, heap in use by mallinfo2) besides the
// 12.2 MB line dumped from it.  Members in the order nlohmann's sorted
// objects dump them, so the line is the one dump() would give.
std::string history(const json &req, const Store &store, const ApiInfo &info)
{
	if (!req.contains("pool") || !req["pool"].is_number_unsigned() ||
	    req["pool"].get<std::uint64_t>() == 0 || req["pool"].get<std::uint64_t>() > UINT32_MAX)
		return line_of(error("history: \"pool\" must be a pool id, 1..4294967295"));
	auto id = req["pool"].get<std::uint32_t>();
	double since = info.history_s;
	if (req.contains("since_s")) {
		const json &s = req["since_s"];
		if (!s.is_number() || !std::isfinite(s.get<double>()) || s.get<double>() < 0)
			return line_of(error("history: \"since_s\" must be a number of seconds >= 0"));
		since = s.get<double>();
	}
	std::string why;
	auto source = source_arg(req, why);
	if (!source)
		return line_of(error("history: " + why));
	auto h = store.history(*source, id, since);
	if (!h)
		return line_of(error(fmt::format("history: no {} pool {} (not now, and not among the last {} "
						 "destroyed): see ppctl list",
						 ppkit::to_string(*source), id, kGoneKept)));
	json pool = pool_head(h->pool);
	pool["state"] = h->live ? pool["state"] : json("gone");

	static const ppkit::JsonKey k_alloc("alloc_per_s"), k_hit("hit"), k_inflight("inflight"),
		k_recycle("recycle"), k_released("released_per_s"), k_served("served_per_s"),
		k_time("time_ns");
	std::string out;
	out.reserve(h->points.size() * 160 + 512);
	ppkit::JsonWriter w(out);
	w.begin_object().member("interval_s", info.interval_s).member("ok", true);
	w.key("points").begin_array();
	for (const Point &p : h->points) {
		const auto served = point_num(p.served_per_s);
		// alloc_per_s: deprecated alias of served_per_s (Documentation/ppctld.rst)
		w.begin_object()
			.member(k_alloc, served)
			.member(k_hit, point_num(p.hit))
			.member(k_inflight, p.inflight)
			.member(k_recycle, point_num(p.recycle))
			.member(k_released, point_num(p.released_per_s))
			.member(k_served, served)
			.member(k_time, store.realtime_of(p.t_ds))
			.end_object();
	}
	w.end_array();
	w.key("pool").raw(pool.dump(-1, ' ', false, json::error_handler_t::replace));
	w.member("version", ppkit::kDaemonApiVersion).end_object();
	out += '\n';
	return out;
}

}  // namespace

json row_json(const Row &r)
{
	json j = pool_head(r.pool);
	json alerts = json::array();
	if (r.low_hit)
		alerts.push_back("low-hit-rate");
	if (r.leak)
		alerts.push_back("leak-suspect");
	json counters = json::object();
	for (std::size_t i = 0; i < ppkit::kCounterCount; i++)
		if (r.stats.present.test(i))
			counters[std::string(ppkit::name(static_cast<ppkit::Counter>(i)))] =
				r.stats.values[i];
	j["time_ns"] = r.realtime_ns;
	j["inflight"] = opt(r.stats.opt(ppkit::Counter::Inflight));
	j["served_per_s"] = opt_num(r.served_per_s);
	// Deprecated alias of served_per_s: the API's version 1 promised it
	// (Documentation/ppctld.rst); it never meant pages from the allocator.
	j["alloc_per_s"] = j["served_per_s"];
	j["released_per_s"] = opt_num(r.released_per_s);
	j["hit"] = opt_num(r.hit);
	j["recycle"] = opt_num(r.recycle);
	j["alerts"] = std::move(alerts);
	j["counters"] = std::move(counters);
	return j;
}

std::string reply_line(std::string_view line, const Store &store, const ApiInfo &info)
{
	if (line.size() >= ppkit::kDaemonMaxRequest)
		return line_of(error(fmt::format("request too long: at most {} bytes per line",
						 ppkit::kDaemonMaxRequest - 1)));
	json req = json::parse(line, nullptr, false);
	if (req.is_discarded())
		return line_of(error("request is not JSON: send one object per line, e.g. {\"cmd\": \"status\"}"));
	if (!req.is_object() || !req.contains("cmd") || !req["cmd"].is_string())
		return line_of(error("request needs a \"cmd\" string: status, pools or history"));
	std::string cmd = req["cmd"].get<std::string>();
	if (cmd == "status")
		return line_of(status(store, info));
	if (cmd == "pools")
		return line_of(pools(store, info));
	if (cmd == "history")
		return history(req, store, info);
	return line_of(error(fmt::format("unknown command '{}': expected status, pools or history",
					 cmd.substr(0, 64))));
}

json handle_request(std::string_view line, const Store &store, const ApiInfo &info)
{
	return json::parse(reply_line(line, store, info));
}

namespace {

// The id of group @name, -1 for none.
gid_t group_id(const std::string &name)
{
	if (name.empty())
		return static_cast<gid_t>(-1);
	struct group *g = getgrnam(name.c_str());
	if (!g)
		throw std::system_error(ENOENT, std::generic_category(),
					"socket group '" + name + "' does not exist");
	return g->gr_gid;
}

// What failed when the socket's mode or group could not be set; EPERM on
// the group: the daemon (ppctld.service's user of its own) is not in it.
std::string permissions_what(const std::string &path, const std::string &group, int e)
{
	if (e == EPERM && !group.empty())
		return fmt::format("socket group of {}: ppctld is not in group '{}' (ppctld.service: "
				   "SupplementaryGroups={} in a drop-in, systemctl edit ppctld)",
				   path, group, group);
	return "permissions of " + path;
}

}  // namespace

ApiServer::ApiServer(std::string path, unsigned mode, const std::string &group_name,
		     std::size_t max_clients, ApiLimits limits)
	: path_(std::move(path)), max_clients_(max_clients), limits_(limits)
{
	sockaddr_un sa{};
	sa.sun_family = AF_UNIX;
	if (path_.empty() || path_.size() >= sizeof(sa.sun_path))
		throw std::system_error(ENAMETOOLONG, std::generic_category(),
					"socket path '" + path_ + "'");
	std::memcpy(sa.sun_path, path_.data(), path_.size());

	const std::string dir = std::filesystem::path(path_).parent_path().string();
	if (!dir.empty() && mkdir(dir.c_str(), 0755) == 0)
		made_dir_.path = dir;
	const gid_t gid = group_id(group_name);
	fd_ = Fd(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
	if (!fd_)
		throw std::system_error(errno, std::generic_category(), "socket");
	// A socket left by a daemon that died is in the way; a live one is not ours.
	struct stat st {};
	if (lstat(path_.c_str(), &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			throw std::system_error(EEXIST, std::generic_category(),
						path_ + " exists and is not a socket");
		Fd probe(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
		if (connect(probe.get(), reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0)
			throw std::system_error(EADDRINUSE, std::generic_category(),
						"another ppctld listens on " + path_);
		unlink(path_.c_str());
	}
	// Bind under a umask that leaves no window with looser permissions.
	mode_t old = umask(0177);
	int rc = bind(fd_.get(), reinterpret_cast<sockaddr *>(&sa), sizeof(sa));
	int e = errno;
	umask(old);
	if (rc < 0)
		throw std::system_error(e, std::generic_category(), "bind " + path_);
	if (chmod(path_.c_str(), mode) < 0 ||
	    (gid != static_cast<gid_t>(-1) && chown(path_.c_str(), static_cast<uid_t>(-1), gid) < 0)) {
		e = errno;
		unlink(path_.c_str());
		throw std::system_error(e, std::generic_category(), permissions_what(path_, group_name, e));
	}
	if (listen(fd_.get(), 16) < 0) {
		e = errno;
		unlink(path_.c_str());
		throw std::system_error(e, std::generic_category(), "listen " + path_);
	}
}

void ApiServer::reconfigure(unsigned mode, const std::string &group, std::size_t max_clients)
{
	const gid_t gid = group_id(group);
	if (chmod(path_.c_str(), mode) < 0 ||
	    (gid != static_cast<gid_t>(-1) && chown(path_.c_str(), static_cast<uid_t>(-1), gid) < 0)) {
		const int e = errno;
		throw std::system_error(e, std::generic_category(), permissions_what(path_, group, e));
	}
	max_clients_ = max_clients;
}

ApiServer::MadeDir::~MadeDir()
{
	if (!path.empty())
		rmdir(path.c_str());
}

ApiServer::~ApiServer()
{
	unlink(path_.c_str());
}

std::vector<ApiServer::Watch> ApiServer::watches() const
{
	std::vector<Watch> w;
	w.push_back({fd_.get(), POLLIN});
	// A client with client_pending bytes of replies waiting (or any, while
	// total_pending wait) is not read from until they drain.
	for (const auto &c : clients_)
		w.push_back({c->fd.get(), static_cast<short>((full(*c) ? 0 : POLLIN) |
							     (c->out.empty() ? 0 : POLLOUT))});
	return w;
}

void ApiServer::accept_all()
{
	for (;;) {
		Fd c(accept4(fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
		if (!c)
			return;	// EAGAIN, or the client left already
		if (clients_.size() >= max_clients_ && !make_room()) {
			std::string msg = line_of(error(fmt::format("too many clients (at most {})",
								     max_clients_)));
			(void)!send(c.get(), msg.data(), msg.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
			continue;
		}
		auto conn = std::make_unique<Conn>();
		conn->fd = std::move(c);
		conn->active = Clock::now();
		clients_.push_back(std::move(conn));
	}
}

// A full server hangs up on the client silent longest (nothing asked,
// nothing to send) if silent for idle_evict: connections that only sit
// there do not lock the others out.
bool ApiServer::make_room()
{
	const auto now = Clock::now();
	Conn *oldest = nullptr;
	for (const auto &c : clients_)
		if (c->in.empty() && c->out.empty() && now - c->active >= limits_.idle_evict &&
		    (!oldest || c->active < oldest->active))
			oldest = c.get();
	if (!oldest)
		return false;
	drop(oldest->fd.get());
	return true;
}

void ApiServer::expire(Clock::time_point now)
{
	std::vector<int> stalled;
	for (const auto &c : clients_)
		if (!c->out.empty() && now - c->waiting >= limits_.stalled)
			stalled.push_back(c->fd.get());
	for (int fd : stalled)
		drop(fd);
}

void ApiServer::reply(Conn &c, const std::string &line)
{
	if (c.out.empty())
		c.waiting = Clock::now();
	c.out += line;
	pending_ += line.size();
	peak_pending_ = std::max(peak_pending_, c.out.size());
	peak_total_ = std::max(peak_total_, pending_);
}

void ApiServer::flush(Conn &c)
{
	while (!c.out.empty()) {
		ssize_t n = send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			c.closing = true;
			pending_ -= c.out.size();
			c.out.clear();
			return;
		}
		c.out.erase(0, static_cast<std::size_t>(n));
		pending_ -= static_cast<std::size_t>(n);
		c.active = Clock::now();
		c.waiting = c.active;	// progress: the wait starts again
	}
}

void ApiServer::drop(int fd)
{
	std::erase_if(clients_, [this, fd](const std::unique_ptr<Conn> &c) {
		if (c->fd.get() != fd)
			return false;
		pending_ -= c->out.size();
		return true;
	});
}

void ApiServer::answer(Conn &c, const Store &store, const ApiInfo &info)
{
	// The bounds are checked before each request, not after a whole read:
	// once they are reached, the rest of the requests wait too (in @c.in
	// and the socket, which is no longer read) until replies are read.  At
	// most one reply more than a bound waits.
	std::size_t nl;
	while (!c.closing && !full(c) && (nl = c.in.find('\n')) != std::string::npos) {
		std::string_view line(c.in.data(), nl);
		if (!line.empty() && line.back() == '\r')
			line.remove_suffix(1);
		reply(c, reply_line(line, store, info));
		if (line.size() >= ppkit::kDaemonMaxRequest)
			c.closing = true;	// oversized: answered, and hung up
		c.in.erase(0, nl + 1);
	}
	if (!c.closing && c.in.size() >= ppkit::kDaemonMaxRequest &&
	    c.in.find('\n') == std::string::npos) {
		// No newline in sight: answer once, and hang up.
		reply(c, reply_line(c.in, store, info));
		c.in.clear();
		c.closing = true;
	}
}

void ApiServer::serve(int fd, short revents, const Store &store, const ApiInfo &info)
{
	if (fd == fd_.get()) {
		accept_all();
		return;
	}
	auto it = std::find_if(clients_.begin(), clients_.end(),
			       [fd](const std::unique_ptr<Conn> &c) { return c->fd.get() == fd; });
	if (it == clients_.end())
		return;
	Conn &c = **it;
	if ((revents & POLLIN) && !c.closing && !full(c)) {
		char buf[8192];
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			drop(fd);
			return;
		}
		if (n > 0) {
			c.in.append(buf, static_cast<std::size_t>(n));
			c.active = Clock::now();
		}
	}
	if ((revents & (POLLERR | POLLHUP)) && !(revents & POLLIN)) {
		drop(fd);
		return;
	}
	// Answer, send; as the client reads, the requests that waited.
	progress(c, store, info);
	if (c.closing && c.out.empty())
		drop(fd);
	// The requests that waited for the total bound with nothing of their
	// client's to send: no poll brings them back (their bytes are read).
	bool answered = true;
	while (answered && pending_ < limits_.total_pending) {
		answered = false;
		std::vector<int> done;
		for (const auto &o : clients_) {
			if (o->closing || !o->out.empty() || o->in.find('\n') == std::string::npos)
				continue;
			const std::size_t before = o->in.size();
			progress(*o, store, info);
			answered = answered || o->in.size() != before;
			if (o->closing && o->out.empty())
				done.push_back(o->fd.get());
		}
		for (int d : done)
			drop(d);
	}
}

void ApiServer::progress(Conn &c, const Store &store, const ApiInfo &info)
{
	for (;;) {
		answer(c, store, info);
		flush(c);
		// full: the total bound, with nothing of this client's waiting
		if (c.closing || !c.out.empty() || full(c) ||
		    c.in.find('\n') == std::string::npos)
			break;
	}
}

}  // namespace ppctld
