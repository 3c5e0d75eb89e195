package usage

// Sum is what some stops spent, and how many recorded some.
type Sum struct {
	Spent
	Stops int `json:"stops"`
}

// Add counts one stop's usage.
func (s *Sum) Add(spent Spent) {
	s.Spent, s.Stops = s.Spent.Plus(spent), s.Stops+1
}

// Row is one epic's or claimed task's Sum (a task's Epic: its first record's).
type Row struct {
	Epic string `json:"epic,omitempty"`
	Task string `json:"task,omitempty"`
	Sum
}
