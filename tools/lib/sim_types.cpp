// SPDX-License-Identifier: GPL-2.0
// The names of ppsim's knobs, in one place: ppctl's options, its tables and
// its JSON all spell them from here.
#include <array>

#include <linux/ppsim.h>

#include "ppkit/sim.h"

namespace ppkit {

namespace {

// The C++ enums are the uapi's, value for value.
static_assert(static_cast<int>(SimPool::Ppkit) == PPSIM_POOL_PPKIT);
static_assert(static_cast<int>(SimPool::Native) == PPSIM_POOL_NATIVE);
static_assert(static_cast<int>(SimPool::None) == PPSIM_POOL_NONE);
static_assert(static_cast<int>(SimRx::Zerocopy) == PPSIM_RX_ZEROCOPY);
static_assert(static_cast<int>(SimRx::Copy) == PPSIM_RX_COPY);
static_assert(static_cast<int>(SimSync::Precise) == PPSIM_SYNC_PRECISE);
static_assert(static_cast<int>(SimSync::Full) == PPSIM_SYNC_FULL);
static_assert(static_cast<int>(SimPrefetch::AfterSync) == PPSIM_PREFETCH_AFTER_SYNC);
static_assert(static_cast<int>(SimPrefetch::BeforeSync) == PPSIM_PREFETCH_BEFORE_SYNC);
static_assert(static_cast<int>(SimCache::Lifo) == PPSIM_CACHE_LIFO);
static_assert(static_cast<int>(SimCache::Fifo) == PPSIM_CACHE_FIFO);

// Indexed by the enum's value.
constexpr std::array<std::string_view, 3> kPool = {"ppkit", "native", "none"};
constexpr std::array<std::string_view, 2> kRx = {"zerocopy", "copy"};
constexpr std::array<std::string_view, 2> kSync = {"precise", "full"};
constexpr std::array<std::string_view, 2> kPrefetch = {"after-sync", "before-sync"};
constexpr std::array<std::string_view, 2> kCache = {"lifo", "fifo"};

template <typename E>
constexpr std::span<const std::string_view> table()
{
	if constexpr (std::is_same_v<E, SimPool>)
		return kPool;
	else if constexpr (std::is_same_v<E, SimRx>)
		return kRx;
	else if constexpr (std::is_same_v<E, SimSync>)
		return kSync;
	else if constexpr (std::is_same_v<E, SimPrefetch>)
		return kPrefetch;
	else
		return kCache;
}

template <typename E>
std::string_view name_of(E v)
{
	auto names = table<E>();
	auto i = static_cast<std::size_t>(v);
	return i < names.size() ? names[i] : std::string_view("unknown");
}

}  // namespace

std::string_view to_string(SimPool v)
{
	return name_of(v);
}

std::string_view to_string(SimRx v)
{
	return name_of(v);
}

std::string_view to_string(SimSync v)
{
	return name_of(v);
}

std::string_view to_string(SimPrefetch v)
{
	return name_of(v);
}

std::string_view to_string(SimCache v)
{
	return name_of(v);
}

template <typename E>
std::span<const std::string_view> sim_names()
{
	return table<E>();
}

template <typename E>
std::optional<E> sim_from_string(std::string_view name)
{
	auto names = table<E>();
	for (std::size_t i = 0; i < names.size(); i++)
		if (names[i] == name)
			return static_cast<E>(i);
	return std::nullopt;
}

template std::span<const std::string_view> sim_names<SimPool>();
template std::span<const std::string_view> sim_names<SimRx>();
template std::span<const std::string_view> sim_names<SimSync>();
template std::span<const std::string_view> sim_names<SimPrefetch>();
template std::span<const std::string_view> sim_names<SimCache>();
template std::optional<SimPool> sim_from_string<SimPool>(std::string_view);
template std::optional<SimRx> sim_from_string<SimRx>(std::string_view);
template std::optional<SimSync> sim_from_string<SimSync>(std::string_view);
template std::optional<SimPrefetch> sim_from_string<SimPrefetch>(std::string_view);
template std::optional<SimCache> sim_from_string<SimCache>(std::string_view);

std::string_view on_off(bool v)
{
	return v ? "on" : "off";
}

std::optional<bool> on_off_from_string(std::string_view name)
{
	if (name == "on")
		return true;
	if (name == "off")
		return false;
	return std::nullopt;
}

}  // namespace ppkit
