// SPDX-License-Identifier: GPL-2.0
/*
 * The XDP programs ppctl attaches by name (ppctl xdp attach --prog drop|pass|tx),
 * built with clang -target bpf and embedded in libppkit as a bpftool skeleton.
 * Only the chosen one is loaded.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>

#include <bpf/bpf_helpers.h>

/* Every frame dropped as early as it can be: the receive path without the stack. */
SEC("xdp")
int xdp_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

/* Every frame to the stack: XDP's cost on the way in, nothing else. */
SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

/*
 * Every frame back out of the port it came in on, source and destination
 * MAC swapped: recycling through the TX completion path.
 */
SEC("xdp")
int xdp_tx(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	unsigned char tmp[ETH_ALEN];

	/* A runt has no addresses to swap. */
	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	__builtin_memcpy(tmp, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, tmp, ETH_ALEN);
	return XDP_TX;
}

char LICENSE[] SEC("license") = "GPL";
