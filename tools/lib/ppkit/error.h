// SPDX-License-Identifier: GPL-2.0
// libppkit: one exception type, with a category a tool can act on and a
// message that says what failed and why.  What to do next in terms of a
// tool's commands and flags is the tool's to add (ppctl: "see ppctl list"),
// from the category, the source and message().
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "ppkit/types.h"

namespace ppkit {

enum class Errc : std::uint8_t {
	FamilyMissing,	 // the generic netlink family is not registered
	Permission,	 // EPERM/EACCES: the operation needs CAP_NET_ADMIN
	NoSuchPool,	 // ENOENT for a pool id
	NoSuchDevice,	 // ENOENT/ENODEV for a device (ppsim, XDP)
	NotSupported,	 // EOPNOTSUPP: the kernel lacks the operation
	InvalidArgument, // EINVAL/ERANGE: the kernel refused a value
	Kernel,		 // any other error the kernel returned
	Protocol,	 // a reply we cannot parse
	System,		 // a socket call failed
	DaemonMissing,	 // no ppctld listens on the socket
	Daemon,		 // ppctld answered {"ok": false}
};

std::string_view to_string(Errc c);

class Error : public std::runtime_error {
public:
	Error(Errc code, const std::string &message, int sys_errno = 0,
	      std::string extack = {}, std::optional<Source> source = std::nullopt);

	Errc code() const noexcept { return code_; }
	// The positive errno behind the error, 0 if none.
	int sys_errno() const noexcept { return errno_; }
	// The kernel's extended-ack message, "" if it sent none.
	const std::string &extack() const noexcept { return extack_; }
	// The message without the kernel's (what() is "MESSAGE; kernel: EXTACK").
	const std::string &message() const noexcept { return message_; }
	// The family the failed request went to, when it was one.
	std::optional<Source> source() const noexcept { return source_; }

private:
	Errc code_;
	int errno_;
	std::string extack_;
	std::string message_;
	std::optional<Source> source_;
};

// What a failed request was about, to word the error.
struct ErrorContext {
	Source source = Source::Ppkit;
	std::string_view op;			// "pool-get", "pool-set", ...
	std::optional<std::uint32_t> pool_id;	// the pool the request named
};

// The error for a kernel reply of -@err (a positive or negative errno).
Error kernel_error(int err, std::string extack, const ErrorContext &ctx);

// The error for a family that is not registered.
Error family_missing(Source source);

// The ppsim family's: ppsim.ko is not loaded.
Error sim_family_missing();

// The error for a ppsim reply of -@err to @op ("dev-set", ...) about
// device @ifindex (0: none): ENOENT/ENODEV say it is not a ppsim device.
Error sim_kernel_error(int err, std::string extack, std::string_view op, std::uint32_t ifindex);

}  // namespace ppkit
