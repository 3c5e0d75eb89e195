package usage

// Sum is what some stops spent, and how many recorded some.
type Sum struct {
	Spent
	Stops int `json:"stops"`
}

// Row is one epic's or claimed task's Sum (a task's Epic: its first record's).
type Row struct {
	Epic string `json:"epic,omitempty"`
	Task string `json:"task,omitempty"`
	Sum
}

// Sums adds up spending per key; Keys are in the order first met.
type Sums[K comparable] struct {
	Keys []K
	Of   map[K]*Sum
}

// Add counts one stop's usage under key.
func (s *Sums[K]) Add(key K, spent Spent) {
	if s.Of[key] == nil {
		if s.Of == nil {
			s.Of = map[K]*Sum{}
		}
		s.Of[key], s.Keys = &Sum{}, append(s.Keys, key)
	}
	sum := s.Of[key]
	sum.Spent, sum.Stops = sum.Spent.Plus(spent), sum.Stops+1
}
