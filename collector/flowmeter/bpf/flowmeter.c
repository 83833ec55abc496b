// SPDX-License-Identifier: GPL-2.0
/* flowmeter.c: counts bytes and packets per flow at TC egress and ingress
 * of a bond's slaves. It only reads: every path returns TC_ACT_UNSPEC
 * (TCX_NEXT), so the packet goes on unchanged to whatever runs next.
 *
 * The key holds what the bond's transmit hash reads (MACs aside, which sit
 * in the value: one flow between two IPs keeps one entry even when a next
 * hop changes), and what an ICMP error quotes, since layer2+3 and layer3+4
 * hash an error by the packet it is about.
 *
 * The program runs for every packet of the host's busiest links, so the
 * common path is short (docs/flow-meter.md has the measured cost): headers
 * are read in place where the socket buffer holds them linearly, the clock
 * is read once per tick and CPU, the fields that rarely change (MACs, skb
 * hash) are written only when they differ, and above a budget of packets
 * per second on a CPU it counts 1 in N packets at random, N times each. */
#include "meter.h"

#define DIR_TX 0
#define DIR_RX 1

#define FLAG_FRAGMENT 1        /* a fragment of an IP datagram */
#define FLAG_QUOTED 2          /* an ICMP error with a quoted header */
#define FLAG_QUOTED_FRAGMENT 4 /* ...that quotes a fragment */
#define FLAG_IP 8              /* an IP header was read: addresses are valid */
#define FLAG_RX 16             /* received (TC ingress); else transmitted */
#define FLAG_TAG_8021Q 32      /* a tag in the frame, TPID 0x8100 */
#define FLAG_TAG_8021AD 64     /* a tag in the frame, TPID 0x88a8 */

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8

#define IPPROTO_ICMP 1
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define IPPROTO_DCCP 33
#define IPPROTO_FRAGMENT 44
#define IPPROTO_ESP 50
#define IPPROTO_AH 51
#define IPPROTO_ICMPV6 58
#define IPPROTO_SCTP 132
#define IPPROTO_UDPLITE 136


/* Integers in host order; addresses as the packet carries them (IPv4 in
 * the first four bytes). No implicit padding: the map compares every byte,
 * and hashes them all for every packet, so keys are as short as they go:
 * IPv4 flows and ICMP errors (with the header they quote) have maps of
 * their own. */
struct flow_key {
	__u32 ifindex;
	__u16 vlan;      /* TCI, offloaded or in the frame; 0 untagged */
	__u16 ethertype; /* after the tag */
	__u16 sport;     /* ESP/AH: SPI high half */
	__u16 dport;     /* ESP/AH: SPI low half; ICMP echo: identifier */
	__u8 proto;
	__u8 icmp_type;
	__u8 icmp_code;
	__u8 flags; /* FLAG_*: direction and a tag in the frame too */
	__u8 src[16];
	__u8 dst[16];
};

/* An IPv4 flow (FLAG_IP set, EtherType 0x0800), not an ICMP error: the
 * most common key, in half the bytes. */
struct flow4_key {
	__u32 ifindex;
	__u16 vlan;
	__u16 sport;
	__u16 dport;
	__u8 proto;
	__u8 icmp_type;
	__u8 icmp_code;
	__u8 flags;
	__u16 pad;
	__u8 src[4];
	__u8 dst[4];
};

/* An ICMP error: the flow, and the header it quotes. */
struct error_key {
	struct flow_key flow;
	__u8 quoted_proto;
	__u8 pad;
	__u16 quoted_sport;
	__u16 quoted_dport;
	__u16 pad2;
	__u8 quoted_src[16];
	__u8 quoted_dst[16];
};

/* The MACs in frame order (destination first) at an offset of 40, so the
 * program compares and writes them as three aligned words. */
struct flow_counters {
	__u64 bytes;
	__u64 packets;    /* GSO segments */
	__u64 first_seen; /* CLOCK_BOOTTIME, ns (to a tick) */
	__u64 last_seen;
	__u32 skb_hash;        /* tx */
	__u32 ingress_ifindex; /* tx */
	__u8 dst_mac[6];
	__u8 src_mac[6];
	__u8 l4_hash; /* tx: skb->hash is a layer 4 hash */
	__u8 sampled; /* counted 1 in N at least once: bytes and packets are estimates */
	__u8 pad[2];
};

struct lost_key {
	__u32 ifindex;
	__u32 direction;
};

struct lost_counters {
	__u64 bytes;
	__u64 packets;
};

/* What the program knows of its own CPU: the clock as of the last tick,
 * the packets of the current rate window, and N. User space reads the
 * totals and N of every CPU. */
struct cpu_state {
	__u64 jiffies;      /* the tick now was read at */
	__u64 now;          /* CLOCK_BOOTTIME, ns */
	__u64 window_start; /* CLOCK_BOOTTIME of the window's start */
	__u64 seen;         /* packets this window */
	__u64 counted;      /* ...of which counted */
	__u64 charged;      /* their cost, in updates of an existing flow */
	__u64 seen_total;   /* packets of the windows before this one */
	__u64 counted_total;
	__u64 full_jiffies; /* the tick the flow map was last found full at */
	__u64 variance;     /* of the packet estimates: N(N-1) per packet counted 1 in N */
	__u32 rate;         /* N: 1 counts every packet */
	__u32 threshold;    /* count when a random u32 is below it */
};

/* max_entries is set by the loader (Options.MaxFlows). Shared by every
 * CPU with atomic adds: a per-CPU map would take the CPU count times the
 * memory. Not preallocated: an element user space deletes is never reused
 * while a program still adds to it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct flow_key);
	__type(value, struct flow_counters);
} flows SEC(".maps");

/* IPv4 flows (flows holds IPv6 and the frames that are not IP); max_entries
 * set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct flow4_key);
	__type(value, struct flow_counters);
} flows4 SEC(".maps");

/* ICMP errors with their quoted header; max_entries set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct error_key);
	__type(value, struct flow_counters);
} errors SEC(".maps");

/* What no flow entry holds because flows was full, per slave and direction,
 * per CPU (summed when read: no atomics on the path a flood takes). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lost_key);
	__type(value, struct lost_counters);
} lost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_state);
} cpu SEC(".maps");

/* budget is the packets per second a CPU counts one by one (0: no limit);
 * above it the program counts 1 in N. Set by the loader. */
volatile const __u64 budget = 0;

/* copy_headers has every header copied out of the socket buffer, as for
 * one whose headers are not in its linear part (the tests read both ways). */
volatile const __u8 copy_headers = 0;

/* N is chosen per window of at least this long, at a tick. */
#define WINDOW_NS 10000000ULL
#define MAX_RATE (1U << 20)

/* What a counted packet costs, in updates of an existing flow (the
 * benchmark in perpacket_bench_linux_test.go): a new flow's entry is
 * allocated and inserted, a packet of a full map misses and counts in
 * lost. The budget weighs them so a flood of new flows stays within it. */
#define COST_NEW 10
#define COST_LOST 1

/* The socket buffer as the running kernel lays it out (CO-RE): only the
 * l4_hash bit, which the UAPI context does not expose. */
struct sk_buff___meter {
	__u8 l4_hash : 1;
} __attribute__((preserve_access_index));

/* read_l4_hash is cleared by the loader where the kernel has no BTF or
 * refuses bpf_probe_read_kernel (lockdown): the verifier then drops the
 * read as dead code, and l4_hash stays 0. */
volatile const __u8 read_l4_hash = 1;

/* skb_l4_hash reads skb->l4_hash. A TC program's context is the socket
 * buffer itself; the bit sits where the kernel's BTF says. */
static __always_inline __u8 skb_l4_hash(struct __sk_buff *ctx)
{
	struct sk_buff___meter *skb = (void *)ctx;
	__u64 val = 0;

	if (!read_l4_hash || !__builtin_preserve_field_info(skb->l4_hash, FIELD_EXISTS))
		return 0;
	__u32 off = __builtin_preserve_field_info(skb->l4_hash, FIELD_BYTE_OFFSET);
	__u32 size = __builtin_preserve_field_info(skb->l4_hash, FIELD_BYTE_SIZE);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	bpf_probe_read_kernel(&val, size, (void *)skb + off);
#else
	bpf_probe_read_kernel((void *)&val + (8 - size), size, (void *)skb + off);
#endif
	val <<= __builtin_preserve_field_info(skb->l4_hash, FIELD_LSHIFT_U64);
	val >>= __builtin_preserve_field_info(skb->l4_hash, FIELD_RSHIFT_U64);
	return val;
}

/* The packet: its linear part, and the socket buffer for the rest. */
struct pkt {
	struct __sk_buff *skb;
	void *data;
	void *data_end;
};

/* HDR points h at len bytes of the packet at off: in place when the linear
 * part holds them, else copied into buf (headers in paged data, as some
 * drivers and GRO leave them). h is 0 when the packet is shorter. A macro,
 * so that len is a constant the verifier checks the access against. */
#define HDR(h, p, off, len, buf)                                                                \
	do {                                                                                    \
		const __u8 *_q = (p)->data + (off);                                             \
		if (!copy_headers && (void *)(_q + (len)) <= (p)->data_end)                     \
			h = _q;                                                                 \
		else if (bpf_skb_load_bytes((p)->skb, (off), (buf), (len)) == 0)                \
			h = (buf);                                                              \
		else                                                                            \
			h = 0;                                                                  \
	} while (0)

/* parse_ip reads an IPv4 or IPv6 header at off. The protocol of an IPv6
 * packet is its first next header, as the bond's hash reads it; a fragment
 * header is the exception (the fragment flag says it, the protocol is the
 * fragment's). Returns the offset of the layer 4 header, or -1. */
static __always_inline long parse_ip(struct pkt *p, __u32 off, int v6, __u8 *src, __u8 *dst, __u8 *proto,
				     int *fragment)
{
	const __u8 *h;
	if (!v6) {
		__u8 buf[20] __attribute__((aligned(4)));
		HDR(h, p, off, 20, buf);
		if (!h)
			return -1;
		__u32 ihl = (h[0] & 0x0f) * 4;
		if ((h[0] >> 4) != 4 || ihl < 20)
			return -1;
		*fragment = ((h[6] << 8 | h[7]) & 0x3fff) != 0;
		*proto = h[9];
		*(__u32 *)src = *(const __u32 *)(h + 12);
		*(__u32 *)dst = *(const __u32 *)(h + 16);
		return off + ihl;
	}
	__u8 buf[40] __attribute__((aligned(8)));
	HDR(h, p, off, 40, buf);
	if (!h)
		return -1;
	if ((h[0] >> 4) != 6)
		return -1;
	*proto = h[6];
	__builtin_memcpy(src, h + 8, 16);
	__builtin_memcpy(dst, h + 24, 16);
	*fragment = 0;
	if (h[6] == IPPROTO_FRAGMENT) {
		__u8 fbuf[8];
		const __u8 *fh;
		HDR(fh, p, off + 40, 8, fbuf);
		if (!fh)
			return -1;
		*fragment = 1;
		*proto = fh[0];
		return off + 48;
	}
	return off + 40;
}

static __always_inline int has_ports(__u8 proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_DCCP || proto == IPPROTO_SCTP ||
	       proto == IPPROTO_UDPLITE;
}

static __always_inline void parse_ports(struct pkt *p, __u32 off, __u8 proto, __u16 *sport, __u16 *dport)
{
	if (has_ports(proto) || proto == IPPROTO_ESP || proto == IPPROTO_AH) {
		if (proto == IPPROTO_AH)
			off += 4; /* the SPI follows next header, length, reserved */
		__u8 buf[4];
		const __u8 *h;
		HDR(h, p, off, 4, buf);
		if (!h)
			return;
		*sport = h[0] << 8 | h[1];
		*dport = h[2] << 8 | h[3];
	}
}

/* ICMP types with an identifier (icmp_has_id mixes v4 and v6 numbers). */
static __always_inline int icmp_has_id(__u8 type)
{
	return type == 0 || type == 8 || type == 13 || type == 14 || type == 128 || type == 129;
}

static __always_inline int icmp_is_err(__u8 proto, __u8 type)
{
	if (proto == IPPROTO_ICMPV6)
		return type >= 1 && type <= 4;
	return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
}

/* parse_icmp reads an ICMP header into k, and the header an error quotes
 * into q; it returns 1 when q holds one. */
static __always_inline int parse_icmp(struct pkt *p, __u32 off, int v6, struct flow_key *k, struct error_key *q)
{
	__u8 buf[8];
	const __u8 *h;
	HDR(h, p, off, 8, buf);
	if (!h)
		return 0;
	k->icmp_type = h[0];
	k->icmp_code = h[1];
	if (icmp_has_id(h[0]))
		k->dport = h[4] << 8 | h[5];
	if (!icmp_is_err(k->proto, h[0]))
		return 0;
	int qfrag = 0;
	__builtin_memset(q, 0, sizeof(*q));
	long qoff = parse_ip(p, off + 8, v6, q->quoted_src, q->quoted_dst, &q->quoted_proto, &qfrag);
	if (qoff < 0)
		return 0;
	if (qfrag) {
		q->flow.flags = FLAG_QUOTED | FLAG_QUOTED_FRAGMENT;
		return 1;
	}
	q->flow.flags = FLAG_QUOTED;
	if (has_ports(q->quoted_proto))
		parse_ports(p, qoff, q->quoted_proto, &q->quoted_sport, &q->quoted_dport);
	return 1;
}

static __always_inline void count_lost(__u32 ifindex, __u8 dir, __u64 len, __u64 segs)
{
	struct lost_key lk = {.ifindex = ifindex, .direction = dir};
	struct lost_counters *l = bpf_map_lookup_elem(&lost, &lk);
	if (!l) {
		struct lost_counters nl = {.bytes = len, .packets = segs};
		if (bpf_map_update_elem(&lost, &lk, &nl, BPF_NOEXIST) == 0)
			return;
		l = bpf_map_lookup_elem(&lost, &lk);
		if (!l)
			return;
	}
	/* This CPU's own value: no other writes it. */
	l->bytes += len;
	l->packets += segs;
}

/* tick runs at the first packet of a tick on this CPU: it reads the clock,
 * and at the end of a window chooses N for the next one from the packet
 * rate of this one and what its counted packets cost. */
static __always_inline void tick(struct cpu_state *st, __u64 j)
{
	__u64 now = bpf_ktime_get_boot_ns();
	st->jiffies = j;
	st->now = now;
	__u64 elapsed = now - st->window_start;
	if (elapsed < WINDOW_NS)
		return;
	if (budget) {
		__u64 pps = st->seen * 1000000000ULL / elapsed;
		__u64 cost = pps;
		if (st->counted)
			cost = pps * st->charged / st->counted;
		__u64 n = (cost + budget - 1) / budget;
		if (n < 1)
			n = 1;
		if (n > MAX_RATE)
			n = MAX_RATE;
		st->rate = n;
		st->threshold = n > 1 ? (__u32)(0x100000000ULL / n) : 0;
	}
	st->seen_total += st->seen;
	st->counted_total += st->counted;
	st->seen = 0;
	st->counted = 0;
	st->charged = 0;
	st->window_start = now;
}

/* What count adds to a flow, besides its key. */
struct sighting {
	struct __sk_buff *skb;
	struct cpu_state *st;
	__u64 jiffies;
	__u64 len;     /* bytes, times N */
	__u64 packets; /* segments, times N */
	__u32 ifindex;
	__u32 mac[3]; /* destination and source MAC */
	__u8 dir;
	__u8 sampled;
};

/* count adds a packet to its flow in map (flows or errors), or to lost. */
static __always_inline void count(void *map, const void *key, struct sighting *s)
{
	struct cpu_state *st = s->st;
	struct flow_counters *v = bpf_map_lookup_elem(map, key);
	if (!v) {
		if (st->full_jiffies == s->jiffies) {
			/* Full at this tick already: no insertion tried. */
			count_lost(s->ifindex, s->dir, s->len, s->packets);
			st->charged += COST_LOST;
			return;
		}
		struct flow_counters nv;
		__builtin_memset(&nv, 0, sizeof(nv));
		nv.bytes = s->len;
		nv.packets = s->packets;
		nv.first_seen = st->now;
		nv.last_seen = st->now;
		__u32 *mac = (__u32 *)nv.dst_mac;
		mac[0] = s->mac[0];
		mac[1] = s->mac[1];
		mac[2] = s->mac[2];
		nv.sampled = s->sampled;
		if (s->dir == DIR_TX) {
			nv.skb_hash = s->skb->hash;
			nv.l4_hash = skb_l4_hash(s->skb);
			nv.ingress_ifindex = s->skb->ingress_ifindex;
		}
		long err = bpf_map_update_elem(map, key, &nv, BPF_NOEXIST);
		if (err == 0) {
			st->charged += COST_NEW;
			return;
		}
		/* Another CPU added it first, or the map is full. */
		if (err == -EEXIST)
			v = bpf_map_lookup_elem(map, key);
		if (!v) {
			st->full_jiffies = s->jiffies;
			count_lost(s->ifindex, s->dir, s->len, s->packets);
			st->charged += COST_LOST;
			return;
		}
	}
	st->charged++;
	__sync_fetch_and_add(&v->bytes, s->len);
	__sync_fetch_and_add(&v->packets, s->packets);
	/* What rarely changes is written only when it did: a store to the
	 * shared value takes its cache line from the other CPUs. */
	if (v->last_seen != st->now)
		v->last_seen = st->now;
	__u32 *mac = (__u32 *)v->dst_mac;
	if (mac[0] != s->mac[0] || mac[1] != s->mac[1] || mac[2] != s->mac[2]) {
		mac[0] = s->mac[0];
		mac[1] = s->mac[1];
		mac[2] = s->mac[2];
	}
	if (s->sampled && !v->sampled)
		v->sampled = 1;
	if (s->dir == DIR_TX) {
		__u32 hash = s->skb->hash;
		if (v->skb_hash != hash) {
			/* l4_hash says how the hash was made: read with it. */
			v->skb_hash = hash;
			v->l4_hash = skb_l4_hash(s->skb);
		}
		__u32 in = s->skb->ingress_ifindex;
		if (v->ingress_ifindex != in)
			v->ingress_ifindex = in;
	}
}

static __always_inline int meter(struct __sk_buff *skb, __u8 dir)
{
	__u32 zero = 0;
	struct cpu_state *st = bpf_map_lookup_elem(&cpu, &zero);
	if (!st)
		return TC_ACT_UNSPEC; /* an array always has its entry */
	__u64 j = bpf_jiffies64();
	if (st->jiffies != j)
		tick(st, j);
	st->seen++;
	__u64 scale = 1;
	if (st->rate > 1) {
		if (bpf_get_prandom_u32() >= st->threshold)
			return TC_ACT_UNSPEC;
		scale = st->rate;
		st->variance += scale * (scale - 1);
	}
	st->counted++;

	struct pkt p = {.skb = skb, .data = (void *)(long)skb->data, .data_end = (void *)(long)skb->data_end};
	__u32 segs = skb->gso_segs;
	if (segs == 0)
		segs = 1;
	struct sighting s = {
		.skb = skb,
		.st = st,
		.jiffies = j,
		.len = (__u64)skb->len * scale,
		.packets = (__u64)segs * scale,
		.ifindex = skb->ifindex,
		.dir = dir,
		.sampled = scale > 1,
	};

	__u8 ebuf[14] __attribute__((aligned(4)));
	const __u8 *eth;
	HDR(eth, &p, 0, 14, ebuf);
	if (!eth) {
		count_lost(s.ifindex, dir, s.len, s.packets);
		st->charged += COST_LOST;
		return TC_ACT_UNSPEC;
	}
	s.mac[0] = *(const __u32 *)eth;
	s.mac[1] = *(const __u32 *)(eth + 4);
	s.mac[2] = *(const __u32 *)(eth + 8);

	struct flow_key k;
	__builtin_memset(&k, 0, sizeof(k));
	k.ifindex = s.ifindex;
	if (dir == DIR_RX)
		k.flags = FLAG_RX;
	__u16 proto = eth[12] << 8 | eth[13];
	__u32 off = 14;
	if (skb->vlan_present) {
		k.vlan = skb->vlan_tci;
	} else if (proto == ETH_P_8021Q || proto == ETH_P_8021AD) {
		__u8 tbuf[4];
		const __u8 *tag;
		HDR(tag, &p, 14, 4, tbuf);
		if (tag) {
			k.flags |= proto == ETH_P_8021Q ? FLAG_TAG_8021Q : FLAG_TAG_8021AD;
			k.vlan = tag[0] << 8 | tag[1];
			proto = tag[2] << 8 | tag[3];
			off += 4;
		}
	}
	k.ethertype = proto;

	if (proto == ETH_P_IP || proto == ETH_P_IPV6) {
		int v6 = proto == ETH_P_IPV6;
		int frag = 0;
		long l4 = parse_ip(&p, off, v6, k.src, k.dst, &k.proto, &frag);
		if (l4 < 0) {
			/* Not a valid header: counted as a non-IP frame. */
			__builtin_memset(k.src, 0, sizeof(k.src));
			__builtin_memset(k.dst, 0, sizeof(k.dst));
			k.proto = 0;
		} else if (frag) {
			k.flags |= FLAG_IP | FLAG_FRAGMENT;
		} else if (k.proto == IPPROTO_ICMP || k.proto == IPPROTO_ICMPV6) {
			k.flags |= FLAG_IP;
			struct error_key ek;
			if (parse_icmp(&p, l4, v6, &k, &ek)) {
				__u8 qflags = ek.flow.flags;
				ek.flow = k;
				ek.flow.flags |= qflags;
				count(&errors, &ek, &s);
				return TC_ACT_UNSPEC;
			}
		} else {
			k.flags |= FLAG_IP;
			parse_ports(&p, l4, k.proto, &k.sport, &k.dport);
		}
		if (!v6 && (k.flags & FLAG_IP)) {
			struct flow4_key k4 = {
				.ifindex = k.ifindex,
				.vlan = k.vlan,
				.sport = k.sport,
				.dport = k.dport,
				.proto = k.proto,
				.icmp_type = k.icmp_type,
				.icmp_code = k.icmp_code,
				.flags = k.flags,
			};
			*(__u32 *)k4.src = *(__u32 *)k.src;
			*(__u32 *)k4.dst = *(__u32 *)k.dst;
			count(&flows4, &k4, &s);
			return TC_ACT_UNSPEC;
		}
	}
	count(&flows, &k, &s);
	return TC_ACT_UNSPEC;
}

SEC("tc")
int meter_egress(struct __sk_buff *skb)
{
	return meter(skb, DIR_TX);
}

SEC("tc")
int meter_ingress(struct __sk_buff *skb)
{
	return meter(skb, DIR_RX);
}

char _license[] SEC("license") = "GPL";
