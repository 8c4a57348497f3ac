// SPDX-License-Identifier: GPL-2.0
/*
 * The floor under `ppctl --json list` and `--json stats`: the same netlink
 * dumps (ppkit's pool-get; pool-get then stats-get with lent-ages, as ppctl
 * asks for them), read into a 64 KiB buffer and thrown away.  No library,
 * no parsing, no output: what any program that reports these pools pays to
 * the kernel, plus its own exec and exit.  Built static by
 * scripts/bench/ppctl-cost.sh; run as `nl-floor list` or `nl-floor stats`.
 */
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../kmod/include/uapi/linux/ppkit.h"

static char buf[64 << 10] __attribute__((aligned(8)));

struct req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char attrs[64];
};

static void put_attr(struct req *r, unsigned short type, const void *data,
		     unsigned short len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static void family_id(const struct nlmsghdr *h, unsigned short *family)
{
	const char *p = (const char *)NLMSG_DATA(h) + GENL_HDRLEN;
	int len = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	const struct nlattr *a;

	for (; len >= NLA_HDRLEN; len -= NLA_ALIGN(a->nla_len), p += NLA_ALIGN(a->nla_len)) {
		a = (const struct nlattr *)p;
		if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
			return;
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			memcpy(family, p + NLA_HDRLEN, sizeof(*family));
	}
}

/* Send @r, read every reply until DONE or the ACK; @family gets the family id, if asked. */
static int exchange(int fd, struct req *r, unsigned short *family)
{
	if (send(fd, r, r->n.nlmsg_len, 0) < 0)
		return -1;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0)
			return -1;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error ? -1 : 0;
			if (family)
				family_id(h, family);
		}
	}
}

static int dump(int fd, unsigned short family, unsigned char cmd, int ages)
{
	struct req r = {
		.n = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN), .nlmsg_type = family,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.g = { .cmd = cmd, .version = PPKIT_FAMILY_VERSION },
	};

	if (ages)
		put_attr(&r, PPKIT_A_STATS_LENT_AGES, NULL, 0);
	return exchange(fd, &r, NULL);
}

int main(int argc, char **argv)
{
	struct req r = {
		.n = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN), .nlmsg_type = GENL_ID_CTRL,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK },
		.g = { .cmd = CTRL_CMD_GETFAMILY, .version = 1 },
	};
	unsigned short family = 0;
	int stats, fd;

	if (argc != 2 || (strcmp(argv[1], "list") && strcmp(argv[1], "stats"))) {
		fprintf(stderr, "usage: nl-floor list|stats\n");
		return 2;
	}
	stats = !strcmp(argv[1], "stats");
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0) {
		perror("nl-floor: socket");
		return 1;
	}
	put_attr(&r, CTRL_ATTR_FAMILY_NAME, PPKIT_FAMILY_NAME, sizeof(PPKIT_FAMILY_NAME));
	if (exchange(fd, &r, &family) || !family) {
		fprintf(stderr, "nl-floor: no ppkit family: load pp_backport\n");
		return 1;
	}
	if (dump(fd, family, PPKIT_CMD_POOL_GET, 0) ||
	    (stats && dump(fd, family, PPKIT_CMD_STATS_GET, 1))) {
		perror("nl-floor: dump");
		return 1;
	}
	return 0;
}
