// SPDX-License-Identifier: GPL-2.0
// ppctl sim (ppsim devices) and ppctl xdp (XDP programs on an interface).
#include <ostream>

#include <unistd.h>

#include <fmt/format.h>

#include "commands.h"
#include "format.h"
#include "ppkit/error.h"
#include "ppkit/sim.h"
#include "ppkit/xdp.h"
#include "render_sim.h"

namespace ppctl {

namespace {

RenderOptions render_options(const Options &o)
{
	return render_options(o, false);
}

}  // namespace

int cmd_sim(const Options &o, std::ostream &out, std::ostream &)
{
	// The name first: an unknown one is a usage error, whatever is loaded.
	std::uint32_t ifindex = o.ifname.empty() ? 0 : ifindex_of(o.ifname);
	ppkit::SimClient sim;

	switch (o.command) {
	case Command::SimList: {
		auto devs = sim.devices();
		if (o.json)
			out << sim_devices_doc("sim-list", devs).dump() << "\n";
		else if (devs.empty())
			out << "no ppsim devices (ppctl sim add creates one)\n";
		else
			out << sim_table(devs, render_options(o));
		return kExitOk;
	}
	case Command::SimAdd: {
		auto devs = sim.create(o.sim_new);
		if (o.json) {
			out << sim_devices_doc("sim-add", devs).dump() << "\n";
			return kExitOk;
		}
		// Scripts read the names: one per line, nothing else.
		for (const auto &d : devs)
			out << d.ifname << "\n";
		return kExitOk;
	}
	case Command::SimDel: {
		ppkit::SimDevice d = sim.device(ifindex);
		sim.remove(ifindex);
		if (!o.json)
			out << "deleted " << o.ifname
			    << (d.peer_ifindex ? " and its peer " + (d.peer_ifname.empty()
									  ? fmt::format("#{}", *d.peer_ifindex)
									  : d.peer_ifname)
					       : std::string())
			    << "\n";
		return kExitOk;
	}
	case Command::SimSet: {
		ppkit::SimDevice d = sim.set(ifindex, o.sim_set);
		out << (o.json ? sim_device_doc("sim-set", d).dump() + "\n" : sim_settings_line(d));
		return kExitOk;
	}
	case Command::SimGenStart:
	case Command::SimGenStop: {
		bool start = o.command == Command::SimGenStart;
		ppkit::SimDevice d = start ? sim.gen_start(ifindex, o.gen) : sim.gen_stop(ifindex);
		out << (o.json ? sim_device_doc(start ? "sim-gen-start" : "sim-gen-stop", d).dump() + "\n"
			       : gen_line(d, o.raw));
		return kExitOk;
	}
	default:
		break;
	}
	return kExitUsage;
}

int cmd_xdp(const Options &o, std::ostream &out, std::ostream &)
{
	std::uint32_t ifindex = ifindex_of(o.ifname);

	switch (o.command) {
	case Command::XdpAttach: {
		auto bundled = ppkit::xdp_bundled_from_string(o.xdp_prog);
		std::optional<ppkit::XdpProgram> prog;
		if (bundled) {
			prog = ppkit::XdpProgram::bundled(*bundled);
		} else {
			// A file that is no BPF object is the user's to fix: nothing was
			// asked of the kernel yet.
			try {
				prog = ppkit::XdpProgram::file(o.xdp_prog);
			} catch (const ppkit::Error &e) {
				throw UsageError(e.what());
			}
		}
		ppkit::XdpAttached a = ppkit::xdp_attach(ifindex, o.xdp_mode, *prog, o.xdp_force);
		if (o.json)
			out << xdp_status_doc("xdp-attach", ppkit::xdp_status(ifindex)).dump() << "\n";
		else
			out << xdp_attached_line(o.ifname, a);
		return kExitOk;
	}
	case Command::XdpDetach:
		ppkit::xdp_detach(ifindex, o.xdp_mode);
		if (o.json)
			out << xdp_status_doc("xdp-detach", ppkit::xdp_status(ifindex)).dump() << "\n";
		else
			out << fmt::format("{}: {} XDP detached\n", o.ifname, to_string(o.xdp_mode));
		return kExitOk;
	case Command::XdpStatus: {
		ppkit::XdpStatus st = ppkit::xdp_status(ifindex);
		out << (o.json ? xdp_status_doc("xdp-status", st).dump() + "\n" : xdp_status_text(st));
		return kExitOk;
	}
	default:
		break;
	}
	return kExitUsage;
}

}  // namespace ppctl
