/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The KTAP harness of the ppkit test modules (pp_selftest, pp_race): cases
 * run on load, one after the other, each reporting ok, not ok or SKIP; the
 * module's load fails if a case failed.  Each module includes it once.
 */
#ifndef _PPKIT_TESTS_KTAP_H
#define _PPKIT_TESTS_KTAP_H

#include <linux/kernel.h>
#include <linux/printk.h>
#include <linux/platform_device.h>
#include <linux/dma-mapping.h>

struct ktap_case {
	const char *name;
	void (*fn)(void);
};

static int ktap_failed;
static const char *ktap_skip;	/* set by a case that cannot run here */
static struct platform_device *ktap_pdev;	/* a DMA-capable device for pools */

#define EXPECT(cond, fmt, ...)						\
	do {								\
		if (!(cond)) {						\
			pr_info("    # %s:%d: expected %s: " fmt "\n",	\
				__func__, __LINE__, #cond, ##__VA_ARGS__); \
			ktap_failed = 1;				\
		}							\
	} while (0)

/* Run @n @cases as suite @name with a platform device of that name. */
static inline int ktap_run(const char *name, const struct ktap_case *cases, size_t n)
{
	struct platform_device_info info = {
		.name = name,
		.id = PLATFORM_DEVID_NONE,
		.dma_mask = DMA_BIT_MASK(64),
	};
	int failed = 0;
	size_t i;

	ktap_pdev = platform_device_register_full(&info);
	if (IS_ERR(ktap_pdev))
		return PTR_ERR(ktap_pdev);
	pr_info("KTAP version 1\n");
	pr_info("1..%zu\n", n);
	for (i = 0; i < n; i++) {
		ktap_failed = 0;
		ktap_skip = NULL;
		cases[i].fn();
		if (ktap_skip)
			pr_info("ok %zu %s # SKIP %s\n", i + 1, cases[i].name, ktap_skip);
		else
			pr_info("%sok %zu %s\n", ktap_failed ? "not " : "", i + 1, cases[i].name);
		failed += ktap_failed;
	}
	pr_info("# %s: %zu cases, %d failed\n", name, n, failed);
	platform_device_unregister(ktap_pdev);
	return failed ? -EINVAL : 0;
}

#endif /* _PPKIT_TESTS_KTAP_H */
