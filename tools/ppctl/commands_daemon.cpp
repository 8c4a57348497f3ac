// SPDX-License-Identifier: GPL-2.0
// ppctl history and ppctl top: through ppctld's API when it runs (top falls
// back to sampling the kernel itself when it does not).
#include <map>
#include <optional>
#include <ostream>

#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <fmt/format.h>

#include "commands.h"
#include "daemon_view.h"
#include "format.h"
#include "ppkit/client.h"
#include "ppkit/daemon.h"
#include "signals.h"

namespace ppctl {

namespace {

using nlohmann::json;

// The terminal in "no echo, no line buffering" while top runs, so a 'q'
// quits at once; restored on the way out, however we leave.
class RawInput {
public:
	RawInput()
	{
		if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &old_) < 0)
			return;
		termios t = old_;
		t.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
		t.c_cc[VMIN] = 0;
		t.c_cc[VTIME] = 0;
		active_ = tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0;
	}
	~RawInput()
	{
		if (active_)
			tcsetattr(STDIN_FILENO, TCSANOW, &old_);
	}
	RawInput(const RawInput &) = delete;
	RawInput &operator=(const RawInput &) = delete;
	bool active() const { return active_; }

private:
	termios old_{};
	bool active_ = false;
};

int terminal_height(int fd)
{
	winsize ws{};
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
		return ws.ws_row;
	return 0;
}

RenderOptions options_of(const Options &o)
{
	return render_options(o, o.source == SourceSel::All);
}

}  // namespace

int cmd_history(const Options &o, std::ostream &out, std::ostream &)
{
	ppkit::DaemonClient d(o.socket);
	json req = {{"cmd", "history"},
		    {"pool", o.pool},
		    {"source", o.source == SourceSel::Netdev ? "netdev" : "ppkit"}};
	if (o.since)
		req["since_s"] = *o.since;
	json reply = d.request(req);
	if (o.json)
		out << history_doc(std::move(reply)).dump() << "\n";
	else
		out << history_table(reply, options_of(o));
	return kExitOk;
}

int cmd_top(const Options &o, std::ostream &out, std::ostream &err)
{
	std::optional<ppkit::DaemonClient> daemon;
	try {
		daemon.emplace(o.socket);
	} catch (const ppkit::Error &e) {
		if (e.code() != ppkit::Errc::DaemonMissing)
			throw;
		if (!o.socket_given)
			err << "ppctl: ppctld is not running: sampling the kernel directly\n";
		else
			throw;
	}

	// Without the daemon: our own windows, one source or both.
	std::vector<ppkit::Client> clients;
	ppkit::Rounds rounds;
	auto direct = [&]() {
		std::vector<ppkit::Sample> all;
		for (ppkit::Client &c : clients)
			for (ppkit::Sample &s : c.sample())
				all.push_back(std::move(s));
		std::vector<TopRow> rows;
		for (ppkit::Rounds::Row &r : rounds.next(std::move(all))) {
			ppkit::Window w;
			if (r.window)
				w = *r.window;
			else
				w.reset = true;
			rows.push_back(top_row(r.sample, w));
		}
		return rows;
	};
	if (!daemon) {
		for (ppkit::Source s : {ppkit::Source::Ppkit, ppkit::Source::Netdev}) {
			bool want = o.source == SourceSel::All ||
				    (o.source == SourceSel::Ppkit) == (s == ppkit::Source::Ppkit);
			if (!want)
				continue;
			try {
				clients.emplace_back(s);
			} catch (const ppkit::Error &e) {
				if (o.source != SourceSel::All || e.code() != ppkit::Errc::FamilyMissing)
					throw;
			}
		}
		if (clients.empty())
			throw ppkit::Error(ppkit::Errc::FamilyMissing,
					   "no pools to watch: load pp_backport (modprobe pp_backport)");
		direct();	// the first window starts here
	}

	Signals sig;
	RawInput keys;
	const bool tty = isatty(STDOUT_FILENO);
	const double interval = o.interval.value_or(1.0);
	std::uint64_t frames = 0;
	auto next = std::chrono::steady_clock::now();
	// Until the next frame is due; false if asked to quit (q, SIGINT, SIGTERM).
	auto wait_next = [&]() {
		next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
			std::chrono::duration<double>(interval));
		std::vector<pollfd> fds;
		if (keys.active())
			fds.push_back({STDIN_FILENO, POLLIN, 0});
		for (;;) {
			int r = sig.wait(fds, next);
			if (r < 0)
				return false;
			if (r == 0)
				return true;
			char c = 0;
			if (read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q'))
				return false;
		}
	};
	for (;;) {
		// The daemon has a window at once; our own sampling needs one first.
		if ((frames > 0 || !daemon) && !wait_next())
			break;
		std::vector<TopRow> rows;
		TopHeader h;
		if (daemon) {
			json r = daemon->request({{"cmd", "pools"}});
			for (const json &p : r.value("pools", json::array())) {
				TopRow row = top_row(p);
				bool want = o.source == SourceSel::All ||
					    (o.source == SourceSel::Ppkit) ==
						    (row.pool.source == ppkit::Source::Ppkit);
				if (want)
					rows.push_back(std::move(row));
			}
			h.time_ns = r.value("time_ns", std::uint64_t{0});
			h.interval_s = r.value("interval_s", 0.0);
			h.from = "ppctld";
		} else {
			rows = direct();
			timespec ts{};
			clock_gettime(CLOCK_REALTIME, &ts);
			h.time_ns = static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL +
				    static_cast<std::uint64_t>(ts.tv_nsec);
			h.interval_s = interval;
			h.from = "kernel";
		}
		sort_rows(rows, o.sort);
		if (o.json) {
			out << top_doc(rows, h).dump() << "\n";
		} else {
			RenderOptions ro = options_of(o);
			if (tty)
				out << "\x1b[H\x1b[J";
			else if (frames > 0)
				out << "\n";
			out << top_screen(rows, h, ro, tty ? terminal_height(STDOUT_FILENO) : 0);
		}
		out.flush();
		frames++;
		if (o.count && frames >= *o.count)
			break;
	}
	return kExitOk;
}

}  // namespace ppctl
