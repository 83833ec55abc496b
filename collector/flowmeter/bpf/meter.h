/* meter.h: the few kernel ABI definitions the flow meter needs, written
 * here so the program builds with clang alone (no kernel or libbpf headers,
 * no per-architecture include paths). Values are the kernel's UAPI
 * (include/uapi/linux/bpf.h, pkt_cls.h). */
#ifndef BONDTOP_METER_H
#define BONDTOP_METER_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef int __s32;
typedef long long __s64;

#define SEC(name) __attribute__((section(name), used))
#define __always_inline inline __attribute__((always_inline))

/* BTF-defined maps: the loader reads these from the object's BTF. */
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name

#define BPF_MAP_TYPE_HASH 1
#define BPF_MAP_TYPE_PERCPU_HASH 5
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_NOEXIST 1
#define BPF_F_NO_PREALLOC 1

/* TC_ACT_UNSPEC and TCX_NEXT are both -1: "not my decision, go on". */
#define TC_ACT_UNSPEC (-1)

#define EEXIST 17

/* The prefix of struct __sk_buff up to the last field the meter reads.
 * Context fields are found by offset, so the prefix must match the UAPI
 * layout exactly. */
struct __sk_buff {
	__u32 len;
	__u32 pkt_type;
	__u32 mark;
	__u32 queue_mapping;
	__u32 protocol;
	__u32 vlan_present;
	__u32 vlan_tci;
	__u32 vlan_proto;
	__u32 priority;
	__u32 ingress_ifindex;
	__u32 ifindex;
	__u32 tc_index;
	__u32 cb[5];
	__u32 hash;
	__u32 tc_classid;
	__u32 data;
	__u32 data_end;
	__u32 napi_id;
	__u32 family;
	__u32 remote_ip4;
	__u32 local_ip4;
	__u32 remote_ip6[4];
	__u32 local_ip6[4];
	__u32 remote_port;
	__u32 local_port;
	__u32 data_meta;
	union {
		void *flow_keys;
		__u64 :64;
	} __attribute__((aligned(8)));
	__u64 tstamp;
	__u32 wire_len;
	__u32 gso_segs;
};

/* Helpers by their number in the kernel's helper table. */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value, __u64 flags) = (void *)2;
static long (*bpf_skb_load_bytes)(const void *skb, __u32 offset, void *to, __u32 len) = (void *)26;
static __u64 (*bpf_ktime_get_boot_ns)(void) = (void *)125;
static __u32 (*bpf_get_prandom_u32)(void) = (void *)7;
static __u64 (*bpf_jiffies64)(void) = (void *)118;
static long (*bpf_probe_read_kernel)(void *dst, __u32 size, const void *unsafe_ptr) = (void *)113;

/* CO-RE field queries (clang's enum bpf_field_info_kind): the loader
 * rewrites them for the running kernel's struct layout (its BTF). */
#define FIELD_BYTE_OFFSET 0
#define FIELD_BYTE_SIZE 1
#define FIELD_EXISTS 2
#define FIELD_LSHIFT_U64 4
#define FIELD_RSHIFT_U64 5

/* Network to host byte order for the target the object is built for. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ntohs(x) __builtin_bswap16(x)
#define ntohl(x) __builtin_bswap32(x)
#else
#define ntohs(x) (x)
#define ntohl(x) (x)
#endif

#endif
