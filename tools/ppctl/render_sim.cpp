// SPDX-License-Identifier: GPL-2.0
#include "render_sim.h"

#include <fmt/format.h>

#include "format.h"
#include "ppkit/json_writer.h"
#include "render.h"
#include "table.h"

namespace ppctl {

using nlohmann::json;
using ppkit::SimDevice;

namespace {

template <typename E>
json opt_name(const std::optional<E> &v)
{
	return v ? json(ppkit::to_string(*v)) : json(nullptr);
}

template <typename E>
std::string name_cell(const std::optional<E> &v)
{
	return v ? std::string(ppkit::to_string(*v)) : "-";
}

std::string num(const std::optional<std::uint32_t> &v)
{
	return v ? std::to_string(*v) : "-";
}

std::string on_off_cell(const std::optional<bool> &v)
{
	return v ? std::string(ppkit::on_off(*v)) : "-";
}

// "ppsim1", "#7" (not in this namespace), "-" (no peer).
std::string peer_cell(const SimDevice &d)
{
	if (!d.peer_ifindex)
		return "-";
	return d.peer_ifname.empty() ? fmt::format("#{}", *d.peer_ifindex) : d.peer_ifname;
}

std::string queues_cell(const SimDevice &d)
{
	if (!d.rx_queues && !d.tx_queues)
		return "-";
	return num(d.rx_queues) + "/" + num(d.tx_queues);
}

std::string irq_cell(const std::optional<std::int32_t> &cpu)
{
	if (!cpu)
		return "-";
	return *cpu < 0 ? "auto" : std::to_string(*cpu);
}

std::string rate_cell(const std::optional<std::uint64_t> &rate, bool raw)
{
	if (!rate)
		return "-";
	return *rate == 0 ? "line" : count(*rate, raw);
}

std::string ethertype_cell(const std::optional<std::uint16_t> &t)
{
	return t ? fmt::format("{:#06x}", *t) : "-";
}

std::string dev_name(const SimDevice &d)
{
	return d.ifname.empty() ? fmt::format("#{}", d.ifindex) : d.ifname;
}

}  // namespace

std::string sim_table(const std::vector<SimDevice> &devs, const RenderOptions &o)
{
	Table t({
		{"DEV", false, 0},	{"IFINDEX", true, 7},  {"PEER", false, 2},
		{"QUEUES", true, 4},	{"RING", true, 4},     {"POOL", false, 0},
		{"RX", false, 1},	{"SYNC", false, 3},    {"PREFETCH", false, 5},
		{"CACHE", false, 3},	{"NUMA", false, 5},    {"FRAG", false, 5},
		{"IRQ", true, 6},
		{"XDP", true, 2},	{"GEN", false, 0},     {"RATE", true, 4},
		{"SENT", true, 1},	{"MISSED", true, 1},
	});
	for (const SimDevice &d : devs)
		t.add({dev_name(d), std::to_string(d.ifindex), peer_cell(d), queues_cell(d),
		       num(d.ring_size), name_cell(d.pool), name_cell(d.rx), name_cell(d.sync),
		       name_cell(d.prefetch), name_cell(d.cache), on_off_cell(d.numa_rule),
		       on_off_cell(d.frag), irq_cell(d.irq_cpu), d.xdp_prog_id ? std::to_string(*d.xdp_prog_id) : "-",
		       on_off_cell(d.gen.running), rate_cell(d.gen.rate, o.raw),
		       count(d.gen.sent, o.raw), count(d.gen.missed, o.raw)});
	return t.render(o.width);
}

std::string sim_settings_line(const SimDevice &d)
{
	return fmt::format("{}: pool {}, rx {}, sync {}, prefetch {}, cache {}, numa-rule {}, "
			   "frag {}, irq-cpu {}, ring {}\n",
			   dev_name(d), name_cell(d.pool), name_cell(d.rx), name_cell(d.sync),
			   name_cell(d.prefetch), name_cell(d.cache), on_off_cell(d.numa_rule),
			   on_off_cell(d.frag), irq_cell(d.irq_cpu), num(d.ring_size));
}

std::string gen_line(const SimDevice &d, bool raw)
{
	const ppkit::SimGen &g = d.gen;
	std::string l = fmt::format("{}: generator {}", dev_name(d),
				    !g.running ? "-" : *g.running ? "running" : "stopped");
	if (g.running && *g.running) {
		l += fmt::format(", rate {}", rate_cell(g.rate, raw));
		if (g.size)
			l += fmt::format(", {} bytes", *g.size);
		l += fmt::format(", ethertype {}", ethertype_cell(g.ethertype));
		if (g.dst_port)
			l += fmt::format(", dst-port {}", *g.dst_port);
		if (g.count)
			l += *g.count ? fmt::format(", {} frames", *g.count) : ", until stopped";
		if (g.cpu)
			l += *g.cpu < 0 ? std::string(", last cpu") : fmt::format(", cpu {}", *g.cpu);
	}
	l += fmt::format("; sent {}, missed {}\n", count(g.sent, raw), count(g.missed, raw));
	return l;
}

std::string xdp_status_text(const ppkit::XdpStatus &st)
{
	std::string dev = st.ifname.empty() ? fmt::format("#{}", st.ifindex) : st.ifname;
	if (!st.attached())
		return dev + ": no XDP program\n";
	std::string out;
	for (const auto &a : st.programs)
		out += xdp_attached_line(dev, a);
	return out;
}

std::string xdp_attached_line(const std::string &ifname, const ppkit::XdpAttached &a)
{
	return fmt::format("{}: {} {} (id {})\n", ifname, to_string(a.mode),
			   a.prog_name.empty() ? "?" : a.prog_name, a.prog_id);
}

json sim_device_json(const SimDevice &d)
{
	const ppkit::SimGen &g = d.gen;
	return {
		{"ifindex", d.ifindex},
		{"ifname", d.ifname.empty() ? json(nullptr) : json(ppkit::valid_utf8(d.ifname))},
		{"peer_ifindex", opt(d.peer_ifindex)},
		{"peer_ifname", d.peer_ifname.empty() ? json(nullptr) : json(ppkit::valid_utf8(d.peer_ifname))},
		{"rx_queues", opt(d.rx_queues)},
		{"tx_queues", opt(d.tx_queues)},
		{"ring_size", opt(d.ring_size)},
		{"pool", opt_name(d.pool)},
		{"rx", opt_name(d.rx)},
		{"sync", opt_name(d.sync)},
		{"prefetch", opt_name(d.prefetch)},
		{"cache", opt_name(d.cache)},
		{"numa_rule", opt(d.numa_rule)},
		{"frag", opt(d.frag)},
		{"irq_cpu", opt(d.irq_cpu)},
		{"xdp_prog_id", opt(d.xdp_prog_id)},
		{"gen",
		 {
			 {"running", opt(g.running)},
			 {"rate", opt(g.rate)},
			 {"size", opt(g.size)},
			 {"ethertype", opt(g.ethertype)},
			 {"dst_port", opt(g.dst_port)},
			 {"count", opt(g.count)},
			 {"cpu", opt(g.cpu)},
			 {"sent", opt(g.sent)},
			 {"missed", opt(g.missed)},
		 }},
	};
}

json sim_devices_doc(std::string_view command, const std::vector<SimDevice> &devs)
{
	json a = json::array();
	for (const SimDevice &d : devs)
		a.push_back(sim_device_json(d));
	return {{"version", kJsonVersion}, {"command", command}, {"devices", a}};
}

json sim_device_doc(std::string_view command, const SimDevice &d)
{
	return {{"version", kJsonVersion}, {"command", command}, {"device", sim_device_json(d)}};
}

json xdp_status_doc(std::string_view command, const ppkit::XdpStatus &st)
{
	json progs = json::array();
	for (const auto &a : st.programs)
		progs.push_back({{"mode", to_string(a.mode)},
				 {"prog_id", a.prog_id},
				 {"prog_name", a.prog_name.empty() ? json(nullptr) : json(ppkit::valid_utf8(a.prog_name))}});
	// One program: its id and name at the top too, for the common case.
	const ppkit::XdpAttached *one = st.programs.size() == 1 ? &st.programs.front() : nullptr;
	return {
		{"version", kJsonVersion},
		{"command", command},
		{"ifindex", st.ifindex},
		{"ifname", st.ifname.empty() ? json(nullptr) : json(ppkit::valid_utf8(st.ifname))},
		{"attached", st.attached()},
		{"mode", st.mode()},
		{"prog_id", one ? json(one->prog_id) : json(nullptr)},
		{"prog_name",
		 one && !one->prog_name.empty() ? json(ppkit::valid_utf8(one->prog_name)) : json(nullptr)},
		{"programs", progs},
	};
}

}  // namespace ppctl
