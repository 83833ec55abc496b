package ui

import "sync"

// mailbox carries values from other goroutines (the sampler, load tests,
// drills) to the tview event loop without ever blocking the sender.
// tview's QueueUpdateDraw waits until the loop has run the update, and
// forever once the loop has stopped, so no sender calls it directly: put
// appends to the box, and one short-lived goroutine at a time queues a
// drain. Nothing put is dropped when the loop falls behind; everything
// that arrived meanwhile is handled in one go, in order, before one redraw.
type mailbox[T any] struct {
	// queue hands a function to the event loop (QueueUpdateDraw).
	queue func(func())
	// handle runs on the event loop with what arrived, oldest first.
	handle func([]T)

	mu     sync.Mutex
	items  []T
	queued bool
}

// put adds v to the box from any goroutine and returns at once.
func (m *mailbox[T]) put(v T) {
	m.mu.Lock()
	m.items = append(m.items, v)
	if m.queued {
		m.mu.Unlock()
		return
	}
	m.queued = true
	m.mu.Unlock()
	// If the loop has stopped this goroutine waits for good; there is at
	// most one per box, and the process is on its way out.
	go m.queue(m.drain)
}

// drain runs on the event loop: it takes everything put so far.
func (m *mailbox[T]) drain() {
	m.mu.Lock()
	items := m.items
	m.items, m.queued = nil, false
	m.mu.Unlock()
	m.handle(items)
}
