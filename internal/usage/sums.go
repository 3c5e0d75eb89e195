package usage

// Sum is what some stops spent: their usage added up, and how many stops
// recorded some.
type Sum struct {
	Spent
	// Stops counts the stops added.
	Stops int `json:"stops"`
}

// Sums adds up spending per key (an epic, a session, a claimed task),
// keeping the keys in the order first met: the decision log's roll-ups
// that runtasks status --usage and the report show.
type Sums[K comparable] struct {
	keys []K
	sums map[K]*Sum
}

// Add counts one stop's usage under key.
func (s *Sums[K]) Add(key K, spent Spent) {
	sum, ok := s.sums[key]
	if !ok {
		if s.sums == nil {
			s.sums = map[K]*Sum{}
		}
		sum = &Sum{}
		s.sums[key] = sum
		s.keys = append(s.keys, key)
	}
	sum.Spent, sum.Stops = sum.Spent.Plus(spent), sum.Stops+1
}

// Keys are the keys added, in the order first met.
func (s *Sums[K]) Keys() []K { return s.keys }

// Get is key's sum; ok is false when nothing was added under it.
func (s *Sums[K]) Get(key K) (sum Sum, ok bool) {
	if p := s.sums[key]; p != nil {
		return *p, true
	}
	return Sum{}, false
}
