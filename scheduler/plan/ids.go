package plan

import "fmt"

// ValidServiceID reports whether id may be a Spec.ServiceID: 8 to 32
// lowercase letters and digits. It goes into reservation ids,
// persistence ids and a label, and Mesos refuses an id that is empty,
// "." or "..", or holds '/', '\' or a character that is not printable
// (src/common/validation.cpp, validateID): letters and digits are safe
// everywhere.
func ValidServiceID(id string) bool {
	if len(id) < 8 || len(id) > 32 {
		return false
	}
	for _, c := range id {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// SetServiceID gives a plan stored before format 2 (Spec.ServiceID "")
// its service id: reservations made from now on carry it; those made
// before keep theirs and are recognised by their reservation ids, which
// the plan holds. A plan that has an id keeps it (it is never changed:
// the service's reservations carry it), and so does one given an id
// that is not ValidServiceID.
func (p *Plan) SetServiceID(id string) error {
	switch {
	case p.spec.ServiceID != "":
		return nil
	case !ValidServiceID(id):
		return fmt.Errorf("%w: service id %q: want 8 to 32 lowercase letters and digits", ErrFormat, id)
	}
	p.spec.ServiceID = id
	return nil
}

// reservationID names the n-th reservation of pod: "<service
// id>.<pod>.r<n>" (the persistence id of its volume adds ".vol"), or
// "<pod>.r<n>" for a plan without a service id (stored before format
// 2 and not yet given one).
func (p *Plan) reservationID(pod string, n int) string {
	if p.spec.ServiceID == "" {
		return fmt.Sprintf("%s.r%d", pod, n)
	}
	return fmt.Sprintf("%s.%s.r%d", p.spec.ServiceID, pod, n)
}

// ownReservations returns, by reservation id, the reservations in o
// that may be this service's: labelled with its framework name and
// either its service id or none (made before service ids existed; the
// plan only ever looks those up by the reservation ids it holds). A
// reservation labelled with another service's id is never this one's,
// whatever its name.
func (p *Plan) ownReservations(o Offer) map[string]OfferedReservation {
	ours := map[string]OfferedReservation{}
	for _, r := range o.Reservations {
		if r.Framework != p.spec.Framework || r.ReservationID == "" {
			continue
		}
		if r.Service != "" && r.Service != p.spec.ServiceID {
			continue
		}
		ours[r.ReservationID] = r
	}
	return ours
}
