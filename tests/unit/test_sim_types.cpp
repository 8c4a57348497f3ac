// SPDX-License-Identifier: GPL-2.0
// The names of ppsim's knobs and of XDP's modes and programs: every name
// comes back as its value, and nothing else is taken for one.
#include <catch2/catch.hpp>

#include "ppkit/sim.h"
#include "ppkit/xdp.h"

using namespace ppkit;

namespace {

template <typename E>
void round_trips(std::vector<std::string_view> want)
{
	auto names = sim_names<E>();
	REQUIRE(std::vector<std::string_view>(names.begin(), names.end()) == want);
	for (std::size_t i = 0; i < names.size(); i++) {
		auto v = sim_from_string<E>(names[i]);
		REQUIRE(v);
		CHECK(static_cast<std::size_t>(*v) == i);
		CHECK(to_string(*v) == names[i]);
	}
	CHECK(to_string(static_cast<E>(names.size())) == "unknown");
	CHECK(to_string(static_cast<E>(255)) == "unknown");
	CHECK_FALSE(sim_from_string<E>(""));
	CHECK_FALSE(sim_from_string<E>("unknown"));
	CHECK_FALSE(sim_from_string<E>(std::string(names[0]) + " "));
	// Names are lower case: no other spelling.
	std::string upper(names[0]);
	for (char &c : upper)
		c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
	CHECK_FALSE(sim_from_string<E>(upper));
}

}  // namespace

TEST_CASE("ppsim knob names round trip", "[sim][types]")
{
	round_trips<SimPool>({"ppkit", "native", "none"});
	round_trips<SimRx>({"zerocopy", "copy"});
	round_trips<SimSync>({"precise", "full"});
	round_trips<SimPrefetch>({"after-sync", "before-sync"});
	round_trips<SimCache>({"lifo", "fifo"});
	CHECK_FALSE(sim_from_string<SimPrefetch>("after_sync"));
	CHECK_FALSE(sim_from_string<SimRx>("zero-copy"));
	CHECK_FALSE(sim_from_string<SimPool>("pp_backport"));
}

TEST_CASE("the numa rule is on or off", "[sim][types]")
{
	CHECK(on_off(true) == "on");
	CHECK(on_off(false) == "off");
	CHECK(on_off_from_string("on") == true);
	CHECK(on_off_from_string("off") == false);
	CHECK_FALSE(on_off_from_string("1"));
	CHECK_FALSE(on_off_from_string("yes"));
	CHECK_FALSE(on_off_from_string("ON"));
}

TEST_CASE("XDP modes and bundled program names", "[xdp][types]")
{
	for (auto m : {XdpMode::Native, XdpMode::Generic})
		CHECK(xdp_mode_from_string(to_string(m)) == m);
	CHECK(to_string(XdpMode::Offload) == "offload");
	CHECK_FALSE(xdp_mode_from_string("offload"));	// reported, never attached by us
	CHECK_FALSE(xdp_mode_from_string("skb"));
	CHECK_FALSE(xdp_mode_from_string("drv"));

	auto names = xdp_bundled_names();
	REQUIRE(std::vector<std::string_view>(names.begin(), names.end()) ==
		std::vector<std::string_view>{"drop", "pass", "tx"});
	for (auto n : names)
		CHECK(to_string(*xdp_bundled_from_string(n)) == n);
	CHECK_FALSE(xdp_bundled_from_string("xdp_drop"));
	CHECK_FALSE(xdp_bundled_from_string("redirect"));

	XdpStatus st;
	CHECK(st.mode() == "none");
	CHECK_FALSE(st.attached());
	st.programs.push_back({XdpMode::Generic, 3, "xdp_pass"});
	CHECK(st.mode() == "generic");
	st.programs.push_back({XdpMode::Native, 4, "xdp_drop"});
	CHECK(st.mode() == "multi");
}
