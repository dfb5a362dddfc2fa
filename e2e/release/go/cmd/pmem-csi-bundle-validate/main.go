// pmem-csi-bundle-validate: checks an OLM bundle directory (manifests/ with the CSV and the CRD,
// metadata/annotations.yaml) with the operator framework's own validators, the ones
// `operator-sdk bundle validate` runs (github.com/operator-framework/api/pkg/validation): the
// default set (CSV, CRD, bundle) and, with --optional operatorframework, the optional ones that
// need no network (OperatorHub v2, standard categories and capabilities, good practices,
// deprecated APIs). The Go module proxy here serves no operator-sdk, so this program calls the
// same library. It also checks the bundle format that the registry tooling requires of
// metadata/annotations.yaml (media type, directories, package, channels).
//
// usage: pmem-csi-bundle-validate [--optional default|operatorframework] [--k8s-version 1.33]
//
//	[--json] <bundle-dir>
//
// Exit code: 0 no errors (warnings are printed), 1 errors found, 2 usage or the bundle cannot be read.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	verrors "github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	"sigs.k8s.io/yaml"
)

var version = "dev"

// Finding is one error or warning, as printed with --json.
type Finding struct {
	Validator string `json:"validator"`
	Level     string `json:"level"`
	Manifest  string `json:"manifest,omitempty"`
	Type      string `json:"type,omitempty"`
	Field     string `json:"field,omitempty"`
	Detail    string `json:"detail"`
}

// Report is the --json output.
type Report struct {
	Bundle     string    `json:"bundle"`
	Package    string    `json:"package"`
	CSV        string    `json:"csv"`
	Validators []string  `json:"validators"`
	Errors     int       `json:"errors"`
	Warnings   int       `json:"warnings"`
	Findings   []Finding `json:"findings"`
}

type namedValidator struct {
	name string
	v    interfaces.Validator
}

func validatorsFor(set string) ([]namedValidator, error) {
	defaults := []namedValidator{
		{"csv", validation.ClusterServiceVersionValidator},
		{"crd", validation.CustomResourceDefinitionValidator},
		{"bundle", validation.BundleValidator},
	}
	switch set {
	case "default":
		return defaults, nil
	case "operatorframework":
		// The operatorframework suite of operator-sdk, less the multiple-architectures validator,
		// which pulls the images named in the CSV (no registry access here).
		return append(defaults,
			namedValidator{"operatorhub-v2", validation.OperatorHubV2Validator},
			namedValidator{"standard-categories", validation.StandardCategoriesValidator},
			namedValidator{"standard-capabilities", validation.StandardCapabilitiesValidator},
			namedValidator{"good-practices", validation.GoodPracticesValidator},
			namedValidator{"deprecated-apis", validation.AlphaDeprecatedAPIsValidator},
			namedValidator{"objects", validation.ObjectValidator},
		), nil
	}
	return nil, fmt.Errorf("--optional must be default or operatorframework, got %q", set)
}

const (
	annMediaType = "operators.operatorframework.io.bundle.mediatype.v1"
	annManifests = "operators.operatorframework.io.bundle.manifests.v1"
	annMetadata  = "operators.operatorframework.io.bundle.metadata.v1"
	annPackage   = "operators.operatorframework.io.bundle.package.v1"
	annChannels  = "operators.operatorframework.io.bundle.channels.v1"
	annDefault   = "operators.operatorframework.io.bundle.channel.default.v1"
)

// checkFormat checks the bundle layout and metadata/annotations.yaml; returns the findings and
// the annotations (nil when the file cannot be read).
func checkFormat(dir string) ([]Finding, map[string]string) {
	var out []Finding
	add := func(field, detail string) {
		out = append(out, Finding{Validator: "format", Level: "error", Manifest: "metadata/annotations.yaml", Field: field, Detail: detail})
	}
	for _, sub := range []string{"manifests", "metadata"} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err != nil || !st.IsDir() {
			out = append(out, Finding{Validator: "format", Level: "error", Manifest: sub + "/", Detail: "the bundle has no " + sub + "/ directory"})
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		add("", fmt.Sprintf("cannot read metadata/annotations.yaml: %v", err))
		return out, nil
	}
	var doc struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.UnmarshalStrict(raw, &doc); err != nil {
		add("", fmt.Sprintf("metadata/annotations.yaml is not a map of string annotations: %v", err))
		return out, nil
	}
	ann := doc.Annotations
	if ann == nil {
		add("annotations", "missing: the file must hold an annotations map")
		return out, map[string]string{}
	}
	want := map[string]string{annMediaType: "registry+v1", annManifests: "manifests/", annMetadata: "metadata/"}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got, ok := ann[k]; !ok {
			add("annotations."+k, fmt.Sprintf("missing; must be %q", want[k]))
		} else if got != want[k] {
			add("annotations."+k, fmt.Sprintf("must be %q, got %q", want[k], got))
		}
	}
	if strings.TrimSpace(ann[annPackage]) == "" {
		add("annotations."+annPackage, "missing or empty: the package name")
	}
	channels := []string{}
	for _, c := range strings.Split(ann[annChannels], ",") {
		if c = strings.TrimSpace(c); c != "" {
			channels = append(channels, c)
		}
	}
	if len(channels) == 0 {
		add("annotations."+annChannels, "missing or empty: a comma-separated list of channels")
	}
	if d, ok := ann[annDefault]; ok {
		found := false
		for _, c := range channels {
			found = found || c == d
		}
		if !found {
			add("annotations."+annDefault, fmt.Sprintf("%q is not one of the channels %q", d, ann[annChannels]))
		}
	}
	return out, ann
}

func findingsOf(name string, results []verrors.ManifestResult) []Finding {
	var out []Finding
	conv := func(level string, manifest string, e verrors.Error) Finding {
		return Finding{Validator: name, Level: level, Manifest: manifest, Type: string(e.Type), Field: e.Field, Detail: e.Detail}
	}
	for _, r := range results {
		for _, e := range r.Errors {
			out = append(out, conv("error", r.Name, e))
		}
		for _, w := range r.Warnings {
			out = append(out, conv("warning", r.Name, w))
		}
	}
	return out
}

func main() {
	fs := flag.NewFlagSet("pmem-csi-bundle-validate", flag.ContinueOnError)
	optional := fs.String("optional", "operatorframework", "validator set: default (what bundle validate runs without options) or operatorframework (plus the optional suite)")
	k8sVersion := fs.String("k8s-version", "", "Kubernetes version for the deprecated-API and OperatorHub checks, e.g. 1.33 (default: the CSV's minKubeVersion)")
	asJSON := fs.Bool("json", false, "print a JSON report on stdout")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *showVersion {
		fmt.Printf("pmem-csi-bundle-validate %s\n", version)
		return
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: pmem-csi-bundle-validate [--optional default|operatorframework] [--k8s-version X.Y] [--json] <bundle-dir>")
		os.Exit(2)
	}
	dir := fs.Arg(0)
	vals, err := validatorsFor(*optional)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	report := Report{Bundle: dir, Findings: []Finding{}}
	for _, v := range vals {
		report.Validators = append(report.Validators, v.name)
	}
	format, ann := checkFormat(dir)
	report.Findings = append(report.Findings, format...)

	bundle, err := manifests.GetBundleFromDir(dir)
	if err != nil || bundle == nil || bundle.CSV == nil {
		detail := "no bundle with a CSV found"
		if err != nil {
			detail = err.Error()
		}
		report.Findings = append(report.Findings, Finding{Validator: "load", Level: "error", Manifest: "manifests/", Detail: detail})
	} else {
		report.CSV = bundle.CSV.GetName()
		if bundle.Package == "" && ann != nil {
			bundle.Package = ann[annPackage]
		}
		report.Package = bundle.Package
		objs := bundle.ObjectsToValidate()
		if *k8sVersion != "" {
			objs = append(objs, map[string]string{"k8s-version": *k8sVersion})
		}
		for _, v := range vals {
			report.Findings = append(report.Findings, findingsOf(v.name, v.v.Validate(objs...))...)
		}
	}
	for _, f := range report.Findings {
		if f.Level == "error" {
			report.Errors++
		} else {
			report.Warnings++
		}
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(report)
	} else {
		for _, f := range report.Findings {
			where := f.Manifest
			if f.Field != "" {
				where += " " + f.Field
			}
			fmt.Printf("%s [%s] %s: %s\n", strings.ToUpper(f.Level), f.Validator, strings.TrimSpace(where), f.Detail)
		}
		fmt.Printf("bundle %s (csv %s, package %s): %d errors, %d warnings; validators: %s\n",
			dir, report.CSV, report.Package, report.Errors, report.Warnings, strings.Join(report.Validators, ", "))
	}
	if report.Errors > 0 {
		os.Exit(1)
	}
}
