// SPDX-License-Identifier: GPL-2.0
// libppkit: ppsim, the software NIC (ppsim.ko), through its generic netlink
// family (<linux/ppsim.h>).
//
//   ppkit::SimClient sim;                        // Error(FamilyMissing) if not loaded
//   for (const ppkit::SimDevice &d : sim.devices()) ...
//   auto made = sim.create({.pair = true});      // both ports of a pair
//   sim.set(made[0].ifindex, {.pool = ppkit::SimPool::Native});
//   sim.gen_start(made[0].ifindex, {.rate = 1'000'000});
//
// Listing is open to everyone; everything else needs CAP_NET_ADMIN.
// Devices are named by ifindex in the caller's network namespace.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ppkit {

// The knobs of a ppsim device, with the values of the uapi enums
// (static_asserts in sim_types.cpp keep them equal).
enum class SimPool : std::uint8_t { Ppkit, Native, None };
enum class SimRx : std::uint8_t { Zerocopy, Copy };
enum class SimSync : std::uint8_t { Precise, Full };
enum class SimPrefetch : std::uint8_t { AfterSync, BeforeSync };
enum class SimCache : std::uint8_t { Lifo, Fifo };

// Their names, the only spelling ppctl and its JSON use: "ppkit", "native",
// "none"; "zerocopy", "copy"; "precise", "full"; "after-sync",
// "before-sync"; "lifo", "fifo".  A value a newer kernel added is "unknown".
std::string_view to_string(SimPool v);
std::string_view to_string(SimRx v);
std::string_view to_string(SimSync v);
std::string_view to_string(SimPrefetch v);
std::string_view to_string(SimCache v);

// Every name of @E, in enum order; and the value of a name, if it is one.
template <typename E>
std::span<const std::string_view> sim_names();
template <typename E>
std::optional<E> sim_from_string(std::string_view name);

// The numa-rule knob is a switch: "on" / "off".
std::string_view on_off(bool v);
std::optional<bool> on_off_from_string(std::string_view name);

// What the generator of a device is doing (PPSIM_A_GEN_*).
struct SimGen {
	std::optional<bool> running;
	std::optional<std::uint64_t> rate;	// frames/s over all queues, 0: line rate
	std::optional<std::uint32_t> size;	// frame bytes without FCS
	std::optional<std::uint16_t> ethertype;
	std::optional<std::uint16_t> dst_port;
	std::optional<std::uint64_t> count;	// frames to send, 0: until stopped
	std::optional<std::int32_t> cpu;	// -1: the last CPU
	std::optional<std::uint64_t> sent;	// frames written into RX rings
	std::optional<std::uint64_t> missed;	// frames that found no descriptor
};

// One device as a dev-get reply describes it.  Optional fields are the
// attributes a reply may leave out; the uapi's "0: none" of the peer and of
// the XDP program are empty optionals here.
struct SimDevice {
	std::uint32_t ifindex = 0;
	std::string ifname;
	std::optional<std::uint32_t> peer_ifindex;
	std::string peer_ifname;		// resolved by the client, "" if unknown
	std::optional<std::uint32_t> rx_queues;
	std::optional<std::uint32_t> tx_queues;
	std::optional<std::uint32_t> ring_size;	// RX descriptors per queue
	std::optional<SimPool> pool;
	std::optional<SimRx> rx;
	std::optional<SimSync> sync;
	std::optional<SimPrefetch> prefetch;
	std::optional<SimCache> cache;
	std::optional<bool> numa_rule;
	std::optional<bool> frag;		// buffers are fragments of pool pages
	std::optional<std::int32_t> irq_cpu;	// queue 0's CPU (queue q: +q); -1: CPU q
	std::optional<std::uint32_t> xdp_prog_id;
	SimGen gen;
};

// dev-new.  Unset values are the kernel's defaults.
struct SimNewDevice {
	std::optional<std::uint32_t> rx_queues;
	std::optional<std::uint32_t> tx_queues;
	std::optional<std::uint32_t> ring_size;
	bool pair = false;	// two ports wired back to back
};

// dev-set: what to change, at least one.
struct SimSettings {
	std::optional<SimPool> pool;
	std::optional<SimRx> rx;
	std::optional<SimSync> sync;
	std::optional<SimPrefetch> prefetch;
	std::optional<SimCache> cache;
	std::optional<bool> numa_rule;
	std::optional<bool> frag;
	std::optional<std::int32_t> irq_cpu;
	std::optional<std::uint32_t> ring_size;

	bool empty() const
	{
		return !pool && !rx && !sync && !prefetch && !cache && !numa_rule && !frag &&
		       !irq_cpu && !ring_size;
	}
};

// gen-start.  Unset values are the kernel's defaults.
struct SimGenParams {
	std::optional<std::uint64_t> rate;
	std::optional<std::uint32_t> size;
	std::optional<std::uint16_t> ethertype;
	std::optional<std::uint16_t> dst_port;
	std::optional<std::uint64_t> count;
	std::optional<std::int32_t> cpu;
};

class SimClient {
public:
	// Connects to the ppsim family: Error(FamilyMissing) if ppsim is not loaded.
	SimClient();
	~SimClient();
	SimClient(SimClient &&) noexcept;
	SimClient &operator=(SimClient &&) noexcept;

	// Every device in this network namespace (dump), or one
	// (Error(NoSuchDevice) if @ifindex is not a ppsim device).
	std::vector<SimDevice> devices();
	SimDevice device(std::uint32_t ifindex);

	// dev-new: the devices created, both ports of a pair.
	std::vector<SimDevice> create(const SimNewDevice &d);
	// dev-del: the device, and its peer.
	void remove(std::uint32_t ifindex);
	// dev-set; returns the device as it is afterwards.  The kernel is the
	// authority on values: its extack message is in the Error.
	SimDevice set(std::uint32_t ifindex, const SimSettings &s);
	// gen-start / gen-stop; return the device afterwards.
	SimDevice gen_start(std::uint32_t ifindex, const SimGenParams &p);
	SimDevice gen_stop(std::uint32_t ifindex);

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

}  // namespace ppkit
