//go:build linux

package flowmeter

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cilium/ebpf"
)

// kernelKey runs the meter's egress program on one frame (the kernel's
// test run) and returns the flow it counted.
func kernelKey(t testing.TB, objs *meterObjects, frame []byte) (f Flow, ok bool, err error) {
	t.Helper()
	var k meterFlowKey
	var k4 meterFlow4Key
	var ek meterErrorKey
	var v meterFlowCounters
	for it := objs.Flows4.Iterate(); it.Next(&k4, &v); {
		_ = objs.Flows4.Delete(&k4)
	}
	for it := objs.Flows.Iterate(); it.Next(&k, &v); {
		_ = objs.Flows.Delete(&k)
	}
	for it := objs.Errors.Iterate(); it.Next(&ek, &v); {
		_ = objs.Errors.Delete(&ek)
	}
	ret, err := objs.MeterEgress.Run(&ebpf.RunOptions{Data: frame})
	if err != nil {
		// The test run refuses an IP EtherType without a whole IP
		// header (a real slave never sees one without the rest).
		return f, false, err
	}
	if int32(ret) != -1 {
		t.Fatalf("the program returned %d, not TC_ACT_UNSPEC", int32(ret))
	}
	if it := objs.Flows4.Iterate(); it.Next(&k4, &v) {
		decodeKey4(&k4, &f.Key)
	} else if it := objs.Flows.Iterate(); it.Next(&k, &v) {
		decodeKey(&k, &f.Key)
	} else if it := objs.Errors.Iterate(); it.Next(&ek, &v) {
		decodeKey(&ek.Flow, &f.Key)
		decodeQuoted(&ek, &f.Key)
	} else {
		return f, false, nil
	}
	decodeCounters(&v, &f.Counters, bootClock(time.Now()))
	if v.Bytes != uint64(len(frame)) || v.Packets != 1 {
		t.Errorf("counted %d bytes %d packets for a frame of %d", v.Bytes, v.Packets, len(frame))
	}
	return f, true, nil
}

// loadObjects loads the meter; copy has it copy every header out of the
// socket buffer, as for headers outside its linear part.
func loadObjects(t testing.TB, copy bool) *meterObjects {
	t.Helper()
	needRoot(t)
	spec, err := loadMeter()
	if err != nil {
		t.Fatal(err)
	}
	if copy {
		if err := spec.Variables["copy_headers"].Set(uint8(1)); err != nil {
			t.Fatal(err)
		}
	}
	var objs meterObjects
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { objs.Close() })
	return &objs
}

// The kernel program and the Go parser read every frame alike: the hash
// vectors' frames, and random mutations of them (cut short, bytes
// flipped), so the sampled fallback and the eBPF meter give one key; with
// the headers read in place and copied out alike.
func TestKernelParserMatchesGo(t *testing.T) {
	for _, copy := range []bool{false, true} {
		t.Run(map[bool]string{false: "in-place", true: "copied"}[copy], func(t *testing.T) {
			testKernelParser(t, loadObjects(t, copy))
		})
	}
}

func testKernelParser(t *testing.T, objs *meterObjects) {
	refused := 0
	check := func(frame []byte) {
		t.Helper()
		kf, ok, err := kernelKey(t, objs, frame)
		if err != nil {
			refused++
			return
		}
		if !ok {
			t.Fatalf("frame %x: the program counted nothing", frame)
		}
		var gf Flow
		if err := ParseFrame(Frame{Data: frame}, &gf.Key, &gf.SrcMAC, &gf.DstMAC); err != nil {
			t.Fatal(err)
		}
		gf.Ifindex, kf.Ifindex = 0, 0
		if kf.Key != gf.Key || kf.SrcMAC != gf.SrcMAC || kf.DstMAC != gf.DstMAC {
			t.Fatalf("frame %x:\nkernel %+v\ngo     %+v", frame, kf.Key, gf.Key)
		}
	}
	var frames [][]byte
	for _, v := range hashVectors() {
		fr := frameOf(v.flow, v.tpid)
		frames = append(frames, fr)
		check(fr)
	}
	if refused > 0 {
		t.Fatalf("the test run refused %d well-formed frames", refused)
	}
	// A test run needs 14 bytes at least; the kernel reads the frame
	// through skb_load_bytes, so any length above works.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		fr := append([]byte{}, frames[rng.IntN(len(frames))]...)
		for range 1 + rng.IntN(4) {
			fr[14+rng.IntN(len(fr)-14)] = byte(rng.Uint32())
		}
		if rng.IntN(3) == 0 {
			fr = fr[:14+rng.IntN(len(fr)-13)]
		}
		check(fr)
	}
	t.Logf("3000 mutated frames, %d refused by the test run", refused)
	if refused > 500 {
		t.Errorf("the kernel's test run refused %d of 3000 frames", refused)
	}
}

// Where the kernel's BTF is missing (or bpf_probe_read_kernel is refused),
// the meter loads without the l4_hash read and still counts.
func TestLoadWithoutL4Hash(t *testing.T) {
	needRoot(t)
	spec, err := loadMeter()
	if err != nil {
		t.Fatal(err)
	}
	var objs meterObjects
	if err := loadWithoutL4Hash(spec, &objs); err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	fr := frameOf(hashVectors()[3].flow, 0)
	f, ok, err := kernelKey(t, &objs, fr)
	if err != nil || !ok || f.Proto != 17 || f.L4Hash {
		t.Errorf("without l4_hash: %+v, counted %v, %v", f, ok, err)
	}
}
