// Package neighbors owns what the switch says about the other end of each
// slave's cable: it decodes LLDP and CDP frames into a Neighbor, and (on
// Linux) listens on every slave with a receive-only packet socket, keeping
// each slave's neighbour until the TTL its sender gave runs out. It never
// sends a frame.
package neighbors
