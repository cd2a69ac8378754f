package explore

// MapDoc is map.json: the result of a map (Map) and how it was made; a
// shard of a map (map --shard i/n) holds its load levels only.
type MapDoc struct {
	Scenario   string     `json:"scenario"`
	Name       string     `json:"name"`
	Sets       []string   `json:"sets"`
	Load       string     `json:"load"`
	Trigger    string     `json:"trigger"`
	HorizonS   float64    `json:"horizon_s"`
	Grid       int        `json:"grid"`
	Resolution float64    `json:"resolution"`
	Test       SPRT       `json:"test"`
	BaseSeed   uint64     `json:"base_seed"`
	Shard      string     `json:"shard,omitempty"`
	Result     *MapResult `json:"result"`
	Levels     int        `json:"levels"`
	// The chart's axes: names, and the trigger's origin (the chart and
	// the printout show trigger − origin: a spike's end time as its
	// length). The CSVs keep the field's own values.
	LoadLabel     string  `json:"load_label"`
	TriggerLabel  string  `json:"trigger_label"`
	TriggerOrigin float64 `json:"trigger_origin"`
}
