// SPDX-License-Identifier: GPL-2.0
// ppctld: the Prometheus view of a snapshot (Documentation/ppctld.rst lists
// every metric).  Written at scrape time from the store's last published
// snapshot, so one scrape shows one sampling instant.
//
// The text is streamed from the snapshot in pieces of a few KiB: a scrape
// of 1,000 pools (1.3 MB of text) never holds its text whole, nor an object
// per series as prometheus-cpp's Collectable would (those made a scrape's
// heap peak at 12 MB).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "store.h"

namespace ppctld {

// The text exposition (format 0.0.4) of @s, handed to @sink in pieces of
// about kExpositionPiece bytes, each ending at a line's end.
inline constexpr std::size_t kExpositionPiece = 16 << 10;
void write_exposition(const Snapshot &s, const std::function<void(std::string_view)> &sink);

// The whole text exposition of @s.
std::string exposition(const Snapshot &s);

// Write @s in the node_exporter textfile format to @path, atomically (a
// temporary file in the same directory, renamed).  Throws
// std::system_error on failure.
void write_textfile(const std::string &path, const Snapshot &s);

// The textfile of a running daemon: written each round, removed when the
// daemon stops or writes elsewhere, so that node_exporter does not go on
// serving the last one (ppctld_backend_up 1) for a daemon that is gone.
class Textfile {
public:
	explicit Textfile(std::string path) : path_(std::move(path)) {}
	~Textfile();
	Textfile(const Textfile &) = delete;
	Textfile &operator=(const Textfile &) = delete;

	const std::string &path() const { return path_; }
	// write_textfile() to path().
	void write(const Snapshot &s);

private:
	std::string path_;
	bool written_ = false;
};

// civetweb's worker threads: each serves one connection at a time.
inline constexpr int kMetricsThreads = 128;

// GET /metrics on @listen (civetweb threads): the published snapshot of
// @store, streamed in chunks, gzip-compressed when the client accepts it.
class MetricsServer {
public:
	// Throws std::runtime_error when civetweb cannot listen on @listen.
	MetricsServer(const std::string &listen, const Store &store);
	~MetricsServer();
	MetricsServer(const MetricsServer &) = delete;
	MetricsServer &operator=(const MetricsServer &) = delete;

	// Scrapes served since the last call (the daemon trims its heap after
	// them).
	std::uint64_t take_scrapes();
	// The port it listens on (the first, if several).
	int port() const;

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

}  // namespace ppctld
