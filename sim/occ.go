package sim

// occRow is the optimistic-concurrency backend (backend.kind occ): one
// versioned row. An attempt reads the version, then writes with it; a
// write carrying a stale version fails. It has no workers and no queue.
type occRow struct {
	on      bool
	version int64 // the row's version
}

// occArrive is a message reaching the occ backend: a read is answered with
// the row's version; a write succeeds if it carries the current version
// (and bumps it), else fails as "error". The backend does this whether or
// not the client still waits for the answer.
func (m *model) occArrive(now int64, mg msg) {
	if m.refusedInOutage(m.be, now, mg.group, mg.slot, mg.tok) {
		return
	}
	if !mg.write {
		m.answer(now, mg.slot, mg.tok, outOK, m.occ.version)
		return
	}
	m.be.rows.add(m.be, now, mg.group, received)
	m.be.rows.add(m.be, now, mg.group, accepted)
	m.be.rows.add(m.be, now, mg.group, served)
	if mg.val != m.occ.version {
		m.be.rows.add(m.be, now, mg.group, errored)
		m.answer(now, mg.slot, mg.tok, outError, 0)
		return
	}
	m.occ.version++
	m.answer(now, mg.slot, mg.tok, outOK, 0)
}
