package config

import (
	"testing"

	"github.com/runtasks/runtasks/internal/jsoncodec/jsoncodectest"
)

// The config cache's entries: what runtasks config decode prints and a
// hook reads at every stop.
func TestCacheEntryCodec(t *testing.T) {
	jsoncodectest.Equivalent[cfgCacheEntry](t, true,
		`{"build":"/bin/runtasks-hook 8876674 1795746042744390518","values":{"claim.patterns":"[\"(?i)^work on (bd-[a-z0-9.]+)\"]","workflow.epic":"\"bd-e\""},"defaults":["beads.bin","log.level"]}`,
		`{"build":"b","values":{"k":null},"defaults":null,"errors":[{"source":"project.yaml","key":"workflow.epic","msg":"expected text"},null]}`,
		`{"build":"b","values":{"k":1}}`, `{"build":"b","values":[]}`, `{"build":"b","errors":{}}`)
}
