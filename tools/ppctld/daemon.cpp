// SPDX-License-Identifier: GPL-2.0
#include "daemon.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <syslog.h>
#include <unistd.h>

#include <fmt/format.h>

#include "api.h"
#include "fd.h"
#include "feed.h"
#include "metrics.h"
#include "ppkit/client.h"
#include "ppkit/error.h"
#include "store.h"

namespace ppctld {

namespace {

// For a leak-suspect alert: who holds the pool's pages (ppkit pools; needs
// CAP_NET_ADMIN, as the unit has).  "" when there is nothing to say.
std::string holders_note(ppkit::Client &c, const ppkit::Pool &pool)
{
	if (c.source() != ppkit::Source::Ppkit)
		return {};
	try {
		ppkit::Holders h = c.holders(pool.id);
		ppkit::name_holders(h);
		std::string t = ppkit::top_holder_text(h);
		return t.empty() ? t : "; " + t;
	} catch (const ppkit::Error &e) {
		return fmt::format("; who holds them is unknown ({})", e.what());
	}
}

template <typename... Args>
void log(int prio, fmt::format_string<Args...> f, Args &&...args)
{
	std::string msg = fmt::format(f, std::forward<Args>(args)...);
	syslog(prio, "%s", msg.c_str());
}

std::uint64_t realtime_ns()
{
	timespec ts{};
	clock_gettime(CLOCK_REALTIME, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL +
	       static_cast<std::uint64_t>(ts.tv_nsec);
}

// The pid file, removed again on the way out.
class PidFile {
public:
	explicit PidFile(std::string path) : path_(std::move(path))
	{
		if (path_.empty())
			return;
		std::ofstream f(path_);
		f << getpid() << "\n";
		if (!f)
			throw std::runtime_error("cannot write the pid file " + path_);
	}
	~PidFile()
	{
		if (!path_.empty())
			unlink(path_.c_str());
	}
	PidFile(const PidFile &) = delete;
	PidFile &operator=(const PidFile &) = delete;

private:
	std::string path_;
};

// One netlink source: its client and notification socket while its family
// is there.
struct Backend {
	ppkit::Source source;
	std::optional<ppkit::Client> client;
	std::optional<ppkit::Monitor> monitor;
	bool stats = true;		// the kernel reports statistics
	std::optional<bool> was_up;	// for logging transitions once
	std::string why;
	LentAges ages;			// when the last round asked for them
};

// A family's client and notification socket as the sampler reads them.
class NetlinkFeed : public Feed {
public:
	NetlinkFeed(ppkit::Client &c, ppkit::Monitor &m, bool stats)
		: client_(c), monitor_(m), stats_(stats)
	{
	}
	std::vector<ppkit::Pool> pools() override { return client_.pools(); }
	std::optional<ppkit::Pool> pool(std::uint32_t id) override
	{
		try {
			return client_.pool(id);
		} catch (const ppkit::Error &) {
			return std::nullopt;
		}
	}
	bool has_stats() override { return stats_; }
	std::vector<ppkit::Stats> stats(bool lent_ages) override
	{
		client_.set_lent_ages(lent_ages);
		return client_.stats();
	}
	bool pending() override
	{
		pollfd p{monitor_.fd(), POLLIN, 0};
		return poll(&p, 1, 0) > 0;
	}
	std::vector<ppkit::Event> read(bool *lost) override { return monitor_.read(lost); }

private:
	ppkit::Client &client_;
	ppkit::Monitor &monitor_;
	bool stats_;
};

class Daemon {
public:
	Daemon(int argc, const char *const *argv, Config c)
		: argc_(argc), argv_(argv), cfg_(std::move(c)),
		  store_(cfg_, std::chrono::steady_clock::now(), realtime_ns())
	{
		info_.pid = getpid();
		info_.started_realtime_ns = realtime_ns();
		apply_info();
		for (const std::string &s : cfg_.sources)
			backends_.push_back(Backend{*ppkit::source_by_name(s), {}, {}, true, {}, {}, {}});
	}

	// Everything that can fail on bad settings, before the daemon reports
	// itself ready.
	void open()
	{
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGHUP);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGINT);
		sigprocmask(SIG_BLOCK, &set, nullptr);
		signal(SIGPIPE, SIG_IGN);
		sig_ = Fd(signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
		timer_ = Fd(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
		if (!sig_ || !timer_)
			throw std::system_error(errno, std::generic_category(), "signalfd/timerfd");
		open_endpoints(nullptr);
		arm_timer();
	}

	int loop()
	{
		log(LOG_INFO, "started: every {}s, history {}s ({} points per pool), metrics {}, API {}",
		    cfg_.interval_s, cfg_.history_s, cfg_.history_points(),
		    cfg_.listen.empty() ? "off" : "http://" + cfg_.listen + "/metrics",
		    cfg_.socket.empty() ? "off" : cfg_.socket);
		round();
		while (!stop_) {
			std::vector<pollfd> fds;
			fds.push_back({sig_.get(), POLLIN, 0});
			fds.push_back({timer_.get(), POLLIN, 0});
			for (Backend &b : backends_)
				if (b.monitor)
					fds.push_back({b.monitor->fd(), POLLIN, 0});
			std::size_t api_first = fds.size();
			if (api_)
				for (const ApiServer::Watch &w : api_->watches())
					fds.push_back({w.fd, w.events, 0});
			// stalled clients are looked for at least every second
			int timeout = api_ && api_->clients()
					      ? static_cast<int>(ApiServer::expire_every().count())
					      : -1;
			int n = poll(fds.data(), fds.size(), timeout);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				throw std::system_error(errno, std::generic_category(), "poll");
			if (fds[0].revents)
				signals();
			if (fds[1].revents) {
				std::uint64_t ticks = 0;
				if (read(timer_.get(), &ticks, sizeof(ticks)) == sizeof(ticks))
					round();
			}
			for (std::size_t i = 2; i < api_first; i++)
				if (fds[i].revents)
					for (Backend &b : backends_)
						if (b.monitor && b.monitor->fd() == fds[i].fd)
							drain(b);
			for (std::size_t i = api_first; i < fds.size() && api_; i++)
				if (fds[i].revents)
					api_->serve(fds[i].fd, fds[i].revents, store_, info_);
			if (api_)
				api_->expire();
		}
		log(LOG_INFO, "stopping");
		return 0;
	}

private:
	void apply_info()
	{
		info_.interval_s = cfg_.interval_s;
		info_.history_s = cfg_.history_s;
	}

	void arm_timer()
	{
		auto ns = static_cast<long long>(cfg_.interval_s * 1e9);
		itimerspec its{};
		its.it_interval.tv_sec = static_cast<time_t>(ns / 1000000000);
		its.it_interval.tv_nsec = static_cast<long>(ns % 1000000000);
		its.it_value = its.it_interval;
		timerfd_settime(timer_.get(), 0, &its, nullptr);
	}

	std::unique_ptr<MetricsServer> open_metrics(const std::string &listen)
	{
		try {
			return std::make_unique<MetricsServer>(listen, store_);
		} catch (const std::exception &e) {
			throw std::runtime_error(fmt::format(
				"cannot serve metrics on {}: {} (is the port taken? "
				"pick another with --listen ADDR:PORT, or --listen none)",
				listen, e.what()));
		}
	}

	// The metrics server and the API socket for cfg_; @old says what runs
	// now, so unchanged endpoints stay up across a reload.  What is new is
	// opened before what it replaces is closed: when anything fails (a port
	// taken, a directory missing) this throws and the old endpoints go on
	// serving as they were.
	void open_endpoints(const Config *old)
	{
		const bool new_metrics = !old || old->listen != cfg_.listen;
		const bool new_socket = !old || old->socket != cfg_.socket;
		const bool new_access = old && !new_socket &&
					(old->socket_mode != cfg_.socket_mode ||
					 old->socket_group != cfg_.socket_group ||
					 old->max_clients != cfg_.max_clients);
		std::unique_ptr<ApiServer> api;
		if (new_socket && !cfg_.socket.empty()) {
			try {
				api = std::make_unique<ApiServer>(cfg_.socket, cfg_.socket_mode,
								  cfg_.socket_group, cfg_.max_clients);
			} catch (const std::system_error &e) {
				const bool taken = e.code().value() == EADDRINUSE ||
						   e.code().value() == EEXIST;
				throw std::runtime_error(fmt::format(
					"cannot open the API socket: {}{}", e.what(),
					taken ? " (another ppctld? pick another with --socket PATH, "
						"or --socket none)"
					      : ""));
			}
		}
		if (new_access && api_) {
			try {
				api_->reconfigure(cfg_.socket_mode, cfg_.socket_group, cfg_.max_clients);
			} catch (const std::system_error &e) {
				throw std::runtime_error(fmt::format(
					"cannot change the API socket: {} (check --socket-group)", e.what()));
			}
		}
		if (new_metrics) {
			try {
				replace_metrics(old);
			} catch (const std::exception &) {
				if (new_access && api_) {
					try {
						api_->reconfigure(old->socket_mode, old->socket_group,
								  old->max_clients);
					} catch (const std::system_error &) {
						// It had these settings a moment ago.
					}
				}
				throw;
			}
		}
		if (new_socket)
			api_ = std::move(api);
	}

	// The metrics server for cfg_.listen in place of the one for @old
	// (none at start).
	void replace_metrics(const Config *old)
	{
		if (cfg_.listen.empty()) {
			metrics_.reset();
			metrics_retry_ = false;
			return;
		}
		try {
			metrics_ = open_metrics(cfg_.listen);
			metrics_retry_ = false;
			return;
		} catch (const std::exception &e) {
			// At start (a restart while the old process still holds the
			// port, say) sampling and the API go on without metrics, and
			// each round tries the port again.
			if (!old) {
				log(LOG_ERR, "{}; trying again at every sample", e.what());
				metrics_retry_ = true;
				return;
			}
			if (!metrics_)
				throw;
		}
		// The same port on another address is held by the old server
		// itself: close it, try again, and reopen it if that fails too.
		metrics_.reset();
		try {
			metrics_ = open_metrics(cfg_.listen);
		} catch (const std::exception &) {
			try {
				metrics_ = open_metrics(old->listen);
			} catch (const std::exception &e) {
				log(LOG_ERR, "SIGHUP: cannot reopen the old metrics endpoint either: {}",
				    e.what());
			}
			throw;
		}
	}

	void signals()
	{
		signalfd_siginfo si{};
		while (read(sig_.get(), &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGHUP)
				reload();
			else
				stop_ = true;
		}
	}

	void reload()
	{
		std::ostringstream out, err;
		Parsed p = parse(argc_, argv_, out, err);
		if (!p.config) {
			log(LOG_ERR, "SIGHUP: configuration not reloaded, the old one stays: {}",
			    err.str());
			return;
		}
		Config old = std::move(cfg_);
		cfg_ = std::move(*p.config);
		cfg_.foreground = old.foreground;
		cfg_.sources = old.sources;	// a new source needs a restart
		try {
			open_endpoints(&old);
		} catch (const std::exception &e) {
			log(LOG_ERR, "SIGHUP: {}; keeping the old endpoints", e.what());
			cfg_.listen = old.listen;
			cfg_.socket = old.socket;
			cfg_.socket_mode = old.socket_mode;
			cfg_.socket_group = old.socket_group;
			cfg_.max_clients = old.max_clients;
		}
		store_.configure(cfg_);
		apply_info();
		arm_timer();
		log(LOG_INFO, "configuration reloaded: every {}s, history {}s, alerts: hit below {}% "
			      "for {}s, leak {}s",
		    cfg_.interval_s, cfg_.history_s, cfg_.alerts.hit_below * 100,
		    cfg_.alerts.hit_for_s, cfg_.alerts.leak_for_s);
	}

	// @retire: the family is gone (a connect failed); else a dump or a
	// notification read failed, and the pools keep their histories until
	// the reconnect's list.
	void down(Backend &b, const std::string &why, bool retire)
	{
		b.client.reset();
		b.monitor.reset();
		store_.on_backend_down(b.source, why, retire);
		if (b.was_up.value_or(true))
			log(LOG_WARNING, "{} pools: not sampling: {}", ppkit::to_string(b.source), why);
		b.was_up = false;
		b.why = why;
	}

	bool connect(Backend &b)
	{
		try {
			ppkit::Client c(b.source);
			ppkit::Monitor m(b.source);
			if (ppkit::Monitor::Buffer buf = m.buffer(); !buf.forced)
				log(LOG_NOTICE,
				    "{} pools: notification buffer {} KiB, not {} KiB: SO_RCVBUFFORCE "
				    "needs CAP_NET_ADMIN and net.core.rmem_max caps the rest (raise it "
				    "with sysctl, or give ppctld the capability); a burst of pool "
				    "changes overruns it sooner",
				    ppkit::to_string(b.source), buf.bytes >> 10,
				    ppkit::Monitor::kBuffer >> 10);
			// Notifications first, then the list: nothing falls in between.
			auto pools = c.pools();
			b.stats = c.has_stats();
			store_.on_pools(b.source, std::move(pools));
			store_.on_backend_up(b.source);
			b.client = std::move(c);
			b.monitor = std::move(m);
			if (!b.was_up.value_or(false))
				log(LOG_NOTICE, "{} pools: sampling {} pools{}", ppkit::to_string(b.source),
				    store_.live_pools(), b.stats ? "" : " (the kernel keeps no statistics)");
			b.was_up = true;
			return true;
		} catch (const ppkit::Error &e) {
			down(b, explain(e), true);
			return false;
		}
	}

	void drain(Backend &b)
	{
		if (!b.monitor)
			return;
		try {
			NetlinkFeed feed(*b.client, *b.monitor, b.stats);
			for (std::size_t n = follow(store_, b.source, feed); n > 0; n--)
				log(LOG_NOTICE, "{} pools: notifications overran, reading the list again",
				    ppkit::to_string(b.source));
		} catch (const ppkit::Error &e) {
			down(b, explain(e), false);
		}
	}

	void round()
	{
		auto t0 = std::chrono::steady_clock::now();
		bool failed = false;
		for (Backend &b : backends_) {
			if (!b.client && !connect(b)) {
				failed = failed || b.source == ppkit::Source::Ppkit;
				continue;
			}
			drain(b);
			if (!b.client)
				continue;
			try {
				NetlinkFeed feed(*b.client, *b.monitor, b.stats);
				std::vector<AlertEvent> events =
					sample(store_, b.source, feed, b.ages,
					       std::chrono::steady_clock::now, realtime_ns);
				for (const AlertEvent &a : events)
					log(a.what == Transition::Raised ? LOG_WARNING : LOG_NOTICE,
					    "alert {} {}: {}{}", a.rule,
					    a.what == Transition::Raised ? "raised" : "cleared", a.detail,
					    a.what == Transition::Raised && a.rule == "leak-suspect"
						    ? holders_note(*b.client, a.pool)
						    : std::string());
			} catch (const ppkit::Error &e) {
				failed = true;
				down(b, explain(e), false);
			}
		}
		for (const AlertEvent &a : store_.take_retired_alerts())
			log(LOG_NOTICE, "alert {} cleared: {}", a.rule, a.detail);
		store_.count_round(
			std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
			failed);
		store_.publish();
		// A scrape streams its text in pieces of 16 KiB, but a slow client
		// or many at once still leave free heap behind that glibc does not
		// give back by itself (M_TRIM_THRESHOLD is high so that sampling
		// reuses its heap): give it back one round after a scrape.
		if (trim_pending_)
			malloc_trim(0);
		trim_pending_ = metrics_ && metrics_->take_scrapes() > 0;
		if (metrics_retry_ && !cfg_.listen.empty()) {
			try {
				metrics_ = open_metrics(cfg_.listen);
				metrics_retry_ = false;
				log(LOG_NOTICE, "metrics: serving http://{}/metrics", cfg_.listen);
			} catch (const std::exception &) {
				// said at start; the next round tries again
			}
		}
		if (cfg_.textfile.empty())
			textfile_.reset();
		else if (!textfile_ || textfile_->path() != cfg_.textfile)
			textfile_ = std::make_unique<Textfile>(cfg_.textfile);
		if (textfile_) {
			try {
				textfile_->write(*store_.snapshot());
				textfile_failing_ = false;
			} catch (const std::exception &e) {
				if (!textfile_failing_)
					log(LOG_ERR, "textfile: {}", e.what());
				textfile_failing_ = true;
			}
		}
	}

	int argc_;
	const char *const *argv_;
	Config cfg_;
	Store store_;
	bool trim_pending_ = false;
	ApiInfo info_;
	std::vector<Backend> backends_;
	Fd sig_, timer_;
	std::unique_ptr<MetricsServer> metrics_;
	bool metrics_retry_ = false;	// its port was taken at start
	std::unique_ptr<ApiServer> api_;
	bool stop_ = false;
	std::unique_ptr<Textfile> textfile_;
	bool textfile_failing_ = false;
};

// Detach from the terminal: the parent waits until the child is serving
// (or has failed, and says why) and exits with that status.
int daemonize(Fd &ready)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		throw std::system_error(errno, std::generic_category(), "pipe");
	Fd rd(p[0]), wr(p[1]);
	pid_t pid = fork();
	if (pid < 0)
		throw std::system_error(errno, std::generic_category(), "fork");
	if (pid > 0) {
		wr.reset();
		std::string msg;
		char buf[512];
		ssize_t n;
		while ((n = read(rd.get(), buf, sizeof(buf))) > 0)
			msg.append(buf, static_cast<std::size_t>(n));
		if (msg == "ok")
			return 0;
		std::cerr << "ppctld: " << (msg.empty() ? "the daemon died while starting" : msg)
			  << "\n";
		return 1;
	}
	setsid();
	if (chdir("/") < 0) {
		// Nothing depends on the working directory.
	}
	ready = std::move(wr);
	return -1;
}

void tell(Fd &ready, const std::string &msg)
{
	if (!ready)
		return;
	(void)!write(ready.get(), msg.data(), msg.size());
	ready.reset();
}

}  // namespace

int run_daemon(int argc, const char *const *argv, Config cfg)
{
	openlog("ppctld", LOG_PID | LOG_NDELAY | (cfg.log_stderr ? LOG_PERROR : 0), LOG_DAEMON);
	Fd ready;
	if (!cfg.foreground) {
		int rc = daemonize(ready);
		if (rc >= 0)
			return rc;
	}
	try {
		Daemon d(argc, argv, cfg);
		d.open();
		PidFile pid(cfg.pidfile);
		tell(ready, "ok");
		if (!cfg.foreground) {
			int null = ::open("/dev/null", O_RDWR);
			if (null >= 0) {
				dup2(null, 0);
				dup2(null, 1);
				dup2(null, 2);
				close(null);
			}
		}
		return d.loop();
	} catch (const std::exception &e) {
		log(LOG_ERR, "{}", e.what());
		tell(ready, e.what());
		if (cfg.foreground && !cfg.log_stderr)
			std::cerr << "ppctld: " << e.what() << "\n";
		return 1;
	}
}

int main(int argc, const char *const *argv)
{
	// A sample of 1,000 pools builds vectors of a few hundred KiB each
	// second: keep them on the heap, not in fresh zeroed mmap()s.
	mallopt(M_MMAP_THRESHOLD, 16 << 20);
	mallopt(M_TRIM_THRESHOLD, 32 << 20);
	// One arena: each civetweb thread serving a scrape would otherwise
	// keep an arena of its own (its text pieces, zlib's state), which the
	// round after a scrape trims only partly.
	mallopt(M_ARENA_MAX, 1);
	Parsed p = parse(argc, argv, std::cout, std::cerr);
	if (!p.config)
		return p.exit;
	return run_daemon(argc, argv, std::move(*p.config));
}

}  // namespace ppctld
