// Clientside callbacks of the Faceoff dashboard (see dashboard/components.py).
window.dash_clientside = Object.assign({}, window.dash_clientside, {
    faceoff: {
        // Keep the address bar equal to the share link without reloading the page.
        replaceUrl: function (href) {
            const here = window.location.pathname + window.location.search;
            if (href && href !== here) {
                window.history.replaceState(window.history.state, "", href);
            }
        },
        // Save the graph as PNG or SVG, drawn by Plotly in the browser.
        downloadImage: function (clicks, id) {
            const graph = document.getElementById(id.graph);
            const plot = graph && graph.querySelector(".js-plotly-plot");
            if (clicks && plot) {
                window.Plotly.downloadImage(plot, {
                    format: id.format,
                    // the figure names its export (layout.meta.export: the objective)
                    filename: (plot.layout.meta && plot.layout.meta.export)
                        || "faceoff-" + id.graph.replace(/-graph$/, ""),
                    width: plot._fullLayout.width,
                    height: plot._fullLayout.height,
                });
            }
        },
    },
});
