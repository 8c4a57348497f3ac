// SPDX-License-Identifier: GPL-2.0
// libppkit: XDP programs on an interface, through libbpf.
//
//   auto prog = ppkit::XdpProgram::bundled(ppkit::XdpBundled::Drop);
//   ppkit::xdp_attach(ifindex, ppkit::XdpMode::Native, prog);   // stays after exit
//   ppkit::XdpStatus st = ppkit::xdp_status(ifindex);
//   ppkit::xdp_detach(ifindex, ppkit::XdpMode::Native);
//
// Attaching goes through rtnetlink, so the program stays attached when the
// process exits.  Loading and attaching need CAP_NET_ADMIN and CAP_BPF (or
// CAP_SYS_ADMIN); opening a program and reading the status do not.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct bpf_program;

namespace ppkit {

// Where an XDP program runs: in the driver ("native", XDP_FLAGS_DRV_MODE),
// in the stack for any device ("generic", XDP_FLAGS_SKB_MODE), or on the NIC
// ("offload": reported, never attached by us).
enum class XdpMode : std::uint8_t { Native, Generic, Offload };
std::string_view to_string(XdpMode m);
// "native" or "generic": the modes one can attach in.
std::optional<XdpMode> xdp_mode_from_string(std::string_view name);

// The programs built into libppkit (tools/bpf/ppkit_xdp.bpf.c): "drop"
// (XDP_DROP), "pass" (XDP_PASS), "tx" (MACs swapped, XDP_TX).
enum class XdpBundled : std::uint8_t { Drop, Pass, Tx };
std::string_view to_string(XdpBundled p);
std::optional<XdpBundled> xdp_bundled_from_string(std::string_view name);
std::span<const std::string_view> xdp_bundled_names();

// One opened (not loaded) BPF object and the XDP program chosen in it.
class XdpProgram {
public:
	// One of the bundled programs; only it is loaded.
	static XdpProgram bundled(XdpBundled p);
	// The first XDP program of an object file (clang -target bpf);
	// Error(InvalidArgument) if it cannot be opened or has none.
	static XdpProgram file(const std::string &path);

	~XdpProgram();
	XdpProgram(XdpProgram &&) noexcept;
	XdpProgram &operator=(XdpProgram &&) noexcept;

	// The program's name ("xdp_drop": its function's name).
	std::string name() const;
	// Every program of the object, chosen or not.
	std::vector<std::string> programs() const;
	// The libbpf program, for its type and the like.
	const bpf_program *get() const;

private:
	struct Impl;
	explicit XdpProgram(std::unique_ptr<Impl> impl);
	std::unique_ptr<Impl> impl_;
	friend struct XdpAccess;
};

// A program attached to an interface.
struct XdpAttached {
	XdpMode mode = XdpMode::Native;
	std::uint32_t prog_id = 0;
	std::string prog_name;	// "" if it could not be read (needs CAP_SYS_ADMIN)
};

// What is attached to an interface: nothing, one program, or one per mode.
struct XdpStatus {
	std::uint32_t ifindex = 0;
	std::string ifname;
	std::vector<XdpAttached> programs;

	bool attached() const { return !programs.empty(); }
	// "none", "native", "generic", "offload", or "multi" (several modes).
	std::string_view mode() const;
};

// Load @prog and attach it to @ifindex in @mode.  A program already
// attached in that mode is replaced only with @replace (ip link's -force);
// else Error(Kernel, EBUSY) "IFNAME already has a MODE XDP program, which
// is replaced only when asked to".  Other errors: Error(NotSupported) "IFNAME has
// no native XDP: try --mode generic", Error(Permission),
// Error(NoSuchDevice), and the kernel's refusals with its extended-ack
// message.
XdpAttached xdp_attach(std::uint32_t ifindex, XdpMode mode, XdpProgram &prog,
		       bool replace = false);
// Detach the program of @mode (nothing attached is not an error).
void xdp_detach(std::uint32_t ifindex, XdpMode mode);
XdpStatus xdp_status(std::uint32_t ifindex);

}  // namespace ppkit
