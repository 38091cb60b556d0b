package client_test

import (
	"fmt"

	"github.com/pikit-dev/pikit/taskbar/client"
)

func ExampleMarkup() {
	markup, err := client.Markup(client.Bootstrap{MountBase: "/dev/pi-browser-taskbar", CSRFToken: "t0k3n"})
	if err != nil {
		panic(err)
	}
	fmt.Println(markup)
	// Output:
	// <script type="application/json" id="pi-browser-taskbar-bootstrap" style="display:none!important">{"mount_base":"/dev/pi-browser-taskbar","csrf_token":"t0k3n","remote_access":false}</script><script src="/dev/pi-browser-taskbar/assets/client.js" defer></script>
}

func ExampleSourceAnnotation() {
	begin, end, err := client.SourceAnnotation("examples/app/templates/cards.html")
	if err != nil {
		panic(err)
	}
	fmt.Println(begin)
	fmt.Println(end)
	// Output:
	// <!-- BEGIN gotmpl:examples/app/templates/cards.html -->
	// <!-- END gotmpl:examples/app/templates/cards.html -->
}
