// SPDX-License-Identifier: GPL-2.0
/* flowmeter.c: counts bytes and packets per flow at TC egress and ingress
 * of a bond's slaves. It only reads: every path returns TC_ACT_UNSPEC
 * (TCX_NEXT), so the packet goes on unchanged to whatever runs next.
 *
 * The key holds what the bond's transmit hash reads (MACs aside, which sit
 * in the value: one flow between two IPs keeps one entry even when a next
 * hop changes), and what an ICMP error quotes, since layer2+3 and layer3+4
 * hash an error by the packet it is about. */
#include "meter.h"

#define DIR_TX 0
#define DIR_RX 1

#define FLAG_FRAGMENT 1        /* a fragment of an IP datagram */
#define FLAG_QUOTED 2          /* an ICMP error with a quoted header */
#define FLAG_QUOTED_FRAGMENT 4 /* ...that quotes a fragment */
#define FLAG_IP 8              /* an IP header was read: addresses are valid */

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
 * the first four bytes). No implicit padding: the map compares every byte. */
struct flow_key {
	__u32 ifindex;
	__u16 vlan;       /* TCI, offloaded or in the frame; 0 untagged */
	__u16 ethertype;  /* after the tag */
	__u16 frame_tpid; /* TPID of a tag still in the frame, else 0 */
	__u16 sport;      /* ESP/AH: SPI high half */
	__u16 dport;      /* ESP/AH: SPI low half; ICMP echo: identifier */
	__u8 direction;
	__u8 proto;
	__u8 icmp_type;
	__u8 icmp_code;
	__u8 flags;
	__u8 quoted_proto;
	__u16 quoted_sport;
	__u16 quoted_dport;
	__u8 src[16];
	__u8 dst[16];
	__u8 quoted_src[16];
	__u8 quoted_dst[16];
};

struct flow_counters {
	__u64 bytes;
	__u64 packets;    /* GSO segments */
	__u64 first_seen; /* CLOCK_BOOTTIME, ns */
	__u64 last_seen;
	__u32 skb_hash;        /* tx */
	__u32 ingress_ifindex; /* tx */
	__u8 src_mac[6];
	__u8 dst_mac[6];
	__u8 l4_hash; /* tx: skb->hash is a layer 4 hash */
	__u8 pad[3];
};

struct lost_key {
	__u32 ifindex;
	__u32 direction;
};

struct lost_counters {
	__u64 bytes;
	__u64 packets;
};

/* max_entries is set by the loader (Options.MaxFlows). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct flow_key);
	__type(value, struct flow_counters);
} flows SEC(".maps");

/* What no flow entry holds because flows was full, per slave and direction. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct lost_key);
	__type(value, struct lost_counters);
} lost SEC(".maps");

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

/* parse_ip reads an IPv4 or IPv6 header at off. The protocol of an IPv6
 * packet is its first next header, as the bond's hash reads it; a fragment
 * header is the exception (the fragment flag says it, the protocol is the
 * fragment's). Returns the offset of the layer 4 header, or -1. */
static __always_inline long parse_ip(struct __sk_buff *skb, __u32 off, int v6, __u8 *src, __u8 *dst,
				     __u8 *proto, int *fragment)
{
	if (!v6) {
		__u8 h[20];
		if (bpf_skb_load_bytes(skb, off, h, sizeof(h)) < 0)
			return -1;
		__u32 ihl = (h[0] & 0x0f) * 4;
		if ((h[0] >> 4) != 4 || ihl < 20)
			return -1;
		*fragment = ((h[6] << 8 | h[7]) & 0x3fff) != 0;
		*proto = h[9];
		__builtin_memcpy(src, &h[12], 4);
		__builtin_memcpy(dst, &h[16], 4);
		return off + ihl;
	}
	__u8 h[40];
	if (bpf_skb_load_bytes(skb, off, h, sizeof(h)) < 0)
		return -1;
	if ((h[0] >> 4) != 6)
		return -1;
	*proto = h[6];
	__builtin_memcpy(src, &h[8], 16);
	__builtin_memcpy(dst, &h[24], 16);
	*fragment = 0;
	if (h[6] == IPPROTO_FRAGMENT) {
		__u8 fh[8];
		if (bpf_skb_load_bytes(skb, off + 40, fh, sizeof(fh)) < 0)
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

static __always_inline void parse_ports(struct __sk_buff *skb, __u32 off, __u8 proto, __u16 *sport, __u16 *dport)
{
	__u16 p[2];
	if (has_ports(proto) || proto == IPPROTO_ESP || proto == IPPROTO_AH) {
		if (proto == IPPROTO_AH)
			off += 4; /* the SPI follows next header, length, reserved */
		if (bpf_skb_load_bytes(skb, off, p, sizeof(p)) < 0)
			return;
		*sport = ntohs(p[0]);
		*dport = ntohs(p[1]);
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

static __always_inline void parse_icmp(struct __sk_buff *skb, __u32 off, int v6, struct flow_key *k)
{
	__u8 h[8];
	if (bpf_skb_load_bytes(skb, off, h, sizeof(h)) < 0)
		return;
	k->icmp_type = h[0];
	k->icmp_code = h[1];
	if (icmp_has_id(h[0]))
		k->dport = h[4] << 8 | h[5];
	if (!icmp_is_err(k->proto, h[0]))
		return;
	int qfrag = 0;
	long qoff = parse_ip(skb, off + 8, v6, k->quoted_src, k->quoted_dst, &k->quoted_proto, &qfrag);
	if (qoff < 0) {
		__builtin_memset(k->quoted_src, 0, sizeof(k->quoted_src));
		__builtin_memset(k->quoted_dst, 0, sizeof(k->quoted_dst));
		k->quoted_proto = 0;
		return;
	}
	k->flags |= FLAG_QUOTED;
	if (qfrag) {
		k->flags |= FLAG_QUOTED_FRAGMENT;
		return;
	}
	if (has_ports(k->quoted_proto))
		parse_ports(skb, qoff, k->quoted_proto, &k->quoted_sport, &k->quoted_dport);
}

static __always_inline void count_lost(__u32 ifindex, __u8 dir, __u32 len, __u32 segs)
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
	__sync_fetch_and_add(&l->bytes, len);
	__sync_fetch_and_add(&l->packets, segs);
}

static __always_inline int meter(struct __sk_buff *skb, __u8 dir)
{
	struct flow_key k;
	__u8 eth[14];

	__builtin_memset(&k, 0, sizeof(k));
	k.ifindex = skb->ifindex;
	k.direction = dir;
	__u32 len = skb->len;
	__u32 segs = skb->gso_segs;
	if (segs == 0)
		segs = 1;

	if (bpf_skb_load_bytes(skb, 0, eth, sizeof(eth)) < 0) {
		count_lost(k.ifindex, dir, len, segs);
		return TC_ACT_UNSPEC;
	}
	__u16 proto = eth[12] << 8 | eth[13];
	__u32 off = sizeof(eth);
	if (skb->vlan_present) {
		k.vlan = skb->vlan_tci;
	} else if (proto == ETH_P_8021Q || proto == ETH_P_8021AD) {
		__u8 tag[4];
		if (bpf_skb_load_bytes(skb, off, tag, sizeof(tag)) == 0) {
			k.frame_tpid = proto;
			k.vlan = tag[0] << 8 | tag[1];
			proto = tag[2] << 8 | tag[3];
			off += sizeof(tag);
		}
	}
	k.ethertype = proto;

	if (proto == ETH_P_IP || proto == ETH_P_IPV6) {
		int v6 = proto == ETH_P_IPV6;
		int frag = 0;
		long l4 = parse_ip(skb, off, v6, k.src, k.dst, &k.proto, &frag);
		if (l4 < 0) {
			/* Not a valid header: counted as a non-IP frame. */
			__builtin_memset(k.src, 0, sizeof(k.src));
			__builtin_memset(k.dst, 0, sizeof(k.dst));
			k.proto = 0;
		} else if (frag) {
			k.flags |= FLAG_IP | FLAG_FRAGMENT;
		} else if (k.proto == IPPROTO_ICMP || k.proto == IPPROTO_ICMPV6) {
			k.flags |= FLAG_IP;
			parse_icmp(skb, l4, v6, &k);
		} else {
			k.flags |= FLAG_IP;
			parse_ports(skb, l4, k.proto, &k.sport, &k.dport);
		}
	}

	__u64 now = bpf_ktime_get_boot_ns();
	struct flow_counters *v = bpf_map_lookup_elem(&flows, &k);
	if (!v) {
		struct flow_counters nv;
		__builtin_memset(&nv, 0, sizeof(nv));
		nv.bytes = len;
		nv.packets = segs;
		nv.first_seen = now;
		nv.last_seen = now;
		__builtin_memcpy(nv.dst_mac, &eth[0], 6);
		__builtin_memcpy(nv.src_mac, &eth[6], 6);
		if (dir == DIR_TX) {
			nv.skb_hash = skb->hash;
			nv.l4_hash = skb_l4_hash(skb);
			nv.ingress_ifindex = skb->ingress_ifindex;
		}
		long err = bpf_map_update_elem(&flows, &k, &nv, BPF_NOEXIST);
		if (err == 0)
			return TC_ACT_UNSPEC;
		/* Another CPU added it first, or the map is full. */
		if (err == -EEXIST)
			v = bpf_map_lookup_elem(&flows, &k);
		if (!v) {
			count_lost(k.ifindex, dir, len, segs);
			return TC_ACT_UNSPEC;
		}
	}
	__sync_fetch_and_add(&v->bytes, len);
	__sync_fetch_and_add(&v->packets, segs);
	v->last_seen = now;
	__builtin_memcpy(v->dst_mac, &eth[0], 6);
	__builtin_memcpy(v->src_mac, &eth[6], 6);
	if (dir == DIR_TX) {
		v->skb_hash = skb->hash;
		v->l4_hash = skb_l4_hash(skb);
		v->ingress_ifindex = skb->ingress_ifindex;
	}
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
