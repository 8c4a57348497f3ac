// SPDX-License-Identifier: GPL-2.0
#include "advice.h"

#include <cerrno>
#include <string>

#include <fmt/format.h>

namespace ppctl {

namespace {

bool is_sim(Command c)
{
	switch (c) {
	case Command::SimList:
	case Command::SimAdd:
	case Command::SimDel:
	case Command::SimSet:
	case Command::SimGenStart:
	case Command::SimGenStop:
		return true;
	default:
		return false;
	}
}

std::string advice(const ppkit::Error &e, const Options &o)
{
	using ppkit::Errc;
	const bool netdev = e.source() == ppkit::Source::Netdev;
	switch (e.code()) {
	case Errc::FamilyMissing:
		return netdev ? ": use --source ppkit" : "";
	case Errc::NoSuchPool:
		return fmt::format(" (see ppctl list{})", netdev ? " --source netdev" : "");
	case Errc::NoSuchDevice:
		return is_sim(o.command) ? " (see ppctl sim list)" : "";
	case Errc::NotSupported:
		if (o.command == Command::XdpAttach && o.xdp_mode == ppkit::XdpMode::Native &&
		    e.sys_errno() == EOPNOTSUPP)
			return ": try --mode generic";
		return "";
	case Errc::Kernel:
		if (o.command == Command::XdpAttach && e.sys_errno() == EBUSY)
			return fmt::format(": detach it first (ppctl xdp detach {} --mode {}), or "
					   "replace it with --force",
					   o.ifname, to_string(o.xdp_mode));
		if (o.command == Command::XdpAttach && e.sys_errno() == EEXIST)
			return fmt::format(" (ppctl xdp detach {} --mode {})", o.ifname,
					   to_string(o.xdp_mode == ppkit::XdpMode::Native
							     ? ppkit::XdpMode::Generic
							     : ppkit::XdpMode::Native));
		return "";
	case Errc::DaemonMissing:
		return ": start it with 'systemctl start ppctld' or 'ppctld --foreground &'";
	default:
		return "";
	}
}

}  // namespace

ppkit::Error advised(const ppkit::Error &e, const Options &o)
{
	std::string more = advice(e, o);
	if (more.empty())
		return e;
	return ppkit::Error(e.code(), e.message() + more, e.sys_errno(), e.extack(), e.source());
}

}  // namespace ppctl
