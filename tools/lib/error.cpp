// SPDX-License-Identifier: GPL-2.0
#include "ppkit/error.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <net/if.h>

#include <fmt/format.h>

namespace ppkit {

namespace {

std::string compose(const std::string &message, const std::string &extack)
{
	if (extack.empty() || message.find(extack) != std::string::npos)
		return message;
	return fmt::format("{}; kernel: {}", message, extack);
}

}  // namespace

std::string_view to_string(Errc c)
{
	switch (c) {
	case Errc::FamilyMissing:
		return "family-missing";
	case Errc::Permission:
		return "permission";
	case Errc::NoSuchPool:
		return "no-such-pool";
	case Errc::NoSuchDevice:
		return "no-such-device";
	case Errc::NotSupported:
		return "not-supported";
	case Errc::InvalidArgument:
		return "invalid-argument";
	case Errc::Kernel:
		return "kernel";
	case Errc::Protocol:
		return "protocol";
	case Errc::System:
		return "system";
	case Errc::DaemonMissing:
		return "daemon-missing";
	case Errc::Daemon:
		return "daemon";
	}
	return "unknown";
}

Error::Error(Errc code, const std::string &message, int sys_errno, std::string extack,
	     std::optional<Source> source)
	: std::runtime_error(compose(message, extack)), code_(code), errno_(sys_errno),
	  extack_(std::move(extack)), message_(message), source_(source)
{
}

Error family_missing(Source source)
{
	if (source == Source::Ppkit)
		return Error(Errc::FamilyMissing,
			     "pp_backport is not loaded: modprobe pp_backport "
			     "(or insmod kmod/pool/pp_backport.ko)",
			     0, {}, source);
	return Error(Errc::FamilyMissing,
		     "this kernel has no netdev netlink family (it needs Linux >= 6.8 "
		     "for page pools)",
		     0, {}, source);
}

namespace {

Error kernel_error_of(int err, std::string extack, const std::string &op, const ErrorContext &ctx)
{
	switch (err) {
	case EPERM:
	case EACCES:
		return Error(Errc::Permission,
			     fmt::format("{} needs CAP_NET_ADMIN: run it as root", op), err,
			     std::move(extack));
	case ENOENT:
		if (ctx.pool_id)
			return Error(Errc::NoSuchPool, fmt::format("no pool {}", *ctx.pool_id), err,
				     std::move(extack));
		break;
	case EOPNOTSUPP:
		return Error(Errc::NotSupported,
			     fmt::format("{}: this kernel does not support it", op), err,
			     std::move(extack));
	case EINVAL:
	case ERANGE: {
		// Worded before extack is moved: arguments are evaluated in any order.
		std::string msg = fmt::format("{}: the kernel refused the request: {}", op,
					      extack.empty() ? std::strerror(err) : extack);
		return Error(Errc::InvalidArgument, msg, err, std::move(extack));
	}
	default:
		break;
	}
	return Error(Errc::Kernel, fmt::format("{}: {}", op, std::strerror(err)), err,
		     std::move(extack));
}

}  // namespace

Error kernel_error(int err, std::string extack, const ErrorContext &ctx)
{
	err = std::abs(err);
	const std::string op = ctx.op.empty() ? std::string("request") : std::string(ctx.op);
	Error e = kernel_error_of(err, std::move(extack), op, ctx);
	return Error(e.code(), e.message(), e.sys_errno(), e.extack(), ctx.source);
}

Error sim_family_missing()
{
	return Error(Errc::FamilyMissing,
		     "ppsim is not loaded: modprobe ppsim "
		     "(or insmod kmod/sim/ppsim.ko after kmod/pool/pp_backport.ko)");
}

Error sim_kernel_error(int err, std::string extack, std::string_view op, std::uint32_t ifindex)
{
	err = std::abs(err);
	const std::string what = fmt::format("ppsim {}", op);
	if (ifindex && (err == ENOENT || err == ENODEV)) {
		char buf[IF_NAMESIZE] = {};
		std::string dev = if_indextoname(ifindex, buf) ? std::string(buf)
							      : fmt::format("interface {}", ifindex);
		return Error(Errc::NoSuchDevice,
			     fmt::format("{} is not a ppsim device", dev), err,
			     std::move(extack));
	}
	return kernel_error(err, std::move(extack), {Source::Ppkit, what, {}});
}

}  // namespace ppkit
