#pragma once
// SPDX-License-Identifier: MIT
/// @file io/aws/pricing_products.hpp Linux on-demand prices per instance type from
/// `aws pricing get-products --service-code AmazonEC2 --output json`.
///
/// Shape (AWS Price List Query API reference, GetProducts; AWS CLI reference, pricing get-products):
/// {"FormatVersion": "aws_v1", "PriceList": ["<one product as JSON text>", …], "NextToken": "…"}. Each
/// PriceList entry is JSON inside a string: {"product": {"productFamily": "Compute Instance", "attributes":
/// {"instanceType": "p3.2xlarge", "operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA",
/// "capacitystatus": "Used", "regionCode": "us-east-1", …}, "sku": "…"}, "terms": {"OnDemand": {"SKU.TERM":
/// {"priceDimensions": {"SKU.TERM.DIM": {"unit": "Hrs", "pricePerUnit": {"USD": "3.0600000000"}, …}}, …}},
/// "Reserved": {…}}, …}. Each entry is parsed with io::parse_json's limits (kMaxJsonFileBytes, kMaxJsonDepth,
/// no duplicate keys); an entry already given as an object is read as it is.
///
/// The Pricing API answers only in us-east-1, eu-central-1 and ap-south-1 (its endpoints), whatever region is
/// priced: call it there and select the priced region with a filter, e.g.
///   aws pricing get-products --region us-east-1 --service-code AmazonEC2 --filters
///     Type=TERM_MATCH,Field=regionCode,Value=eu-west-1 Type=TERM_MATCH,Field=operatingSystem,Value=Linux
///     Type=TERM_MATCH,Field=tenancy,Value=Shared Type=TERM_MATCH,Field=preInstalledSw,Value=NA
///     Type=TERM_MATCH,Field=capacitystatus,Value=Used Type=ANY_OF,Field=instanceType,Value=p3.2xlarge,g5.xlarge
/// The reader still checks every attribute, so an unfiltered output gives the same prices.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "spotdnn/io/aws/aws_output.hpp"
#include "spotdnn/io/json.hpp"

namespace spotdnn::io::aws {

/// The product attributes (name, value) a Linux, shared-tenancy, no-software, ordinary on-demand price has.
/// A product whose regionCode attribute is given must also name the catalog's region.
inline constexpr std::pair<std::string_view, std::string_view> kLinuxOnDemandAttributes[] = {
    {"operatingSystem", "Linux"}, {"tenancy", "Shared"}, {"preInstalledSw", "NA"}, {"capacitystatus", "Used"}};

/// The Linux on-demand price of one instance type.
struct OnDemandPrice {
  std::string instance_type;
  double price_usd_per_hour = 0;
  std::string sku;   ///< product.sku, when given
  std::string path;  ///< e.g. "PriceList[4]", for messages
};

/// What one get-products output says.
struct OnDemandPrices {
  std::map<std::string, OnDemandPrice> by_type;
  std::size_t products = 0;          ///< PriceList entries
  std::size_t other_products = 0;    ///< products that are not a Linux/Shared/NA/Used instance of the region
  bool more_pages = false;           ///< the output has a NextToken: later pages were not fetched
};

namespace pricing_detail {

/// The hourly USD price of a product's OnDemand term: the one price dimension with unit "Hrs".
inline double hourly_on_demand_usd(const AwsOutputReader& in, const Json& product, const std::string& path) {
  using R = AwsOutputReader;
  const std::string terms_path = R::key(path, "terms");
  const Json& terms = in.object(in.required(product, path, "terms"), terms_path);
  const std::string on_demand_path = R::key(terms_path, "OnDemand");
  const Json& on_demand = in.object(in.required(terms, terms_path, "OnDemand"), on_demand_path);
  if (on_demand.size() > kMaxAwsRows) in.fail(on_demand_path, std::to_string(on_demand.size()) + " terms", "too many terms");
  double price = -1;
  std::string price_path;
  for (auto term = on_demand.begin(); term != on_demand.end(); ++term) {
    const std::string term_path = R::key(on_demand_path, term.key());
    in.object(term.value(), term_path);
    const std::string dimensions_path = R::key(term_path, "priceDimensions");
    const Json& dimensions = in.object(in.required(term.value(), term_path, "priceDimensions"), dimensions_path);
    if (dimensions.size() > kMaxAwsRows) in.fail(dimensions_path, std::to_string(dimensions.size()) + " dimensions", "too many dimensions");
    for (auto dimension = dimensions.begin(); dimension != dimensions.end(); ++dimension) {
      const std::string dimension_path = R::key(dimensions_path, dimension.key());
      in.object(dimension.value(), dimension_path);
      const std::string unit = in.text(in.required(dimension.value(), dimension_path, "unit"), R::key(dimension_path, "unit"));
      if (unit != "Hrs") continue;
      const std::string per_unit_path = R::key(dimension_path, "pricePerUnit");
      const Json& per_unit = in.object(in.required(dimension.value(), dimension_path, "pricePerUnit"), per_unit_path);
      const std::string usd_path = R::key(per_unit_path, "USD");
      const double usd = in.decimal_text(in.required(per_unit, per_unit_path, "USD"), usd_path, "USD per hour");
      if (price >= 0 && usd != price) {
        in.fail_at(usd_path, per_unit.at("USD"), "a second hourly on-demand price for the product (the first is at " + price_path + ")");
      }
      price = usd;
      price_path = usd_path;
    }
  }
  if (price < 0) in.fail_at(on_demand_path, on_demand, "no price dimension with unit \"Hrs\" in the OnDemand term");
  if (!(price > 0)) in.fail(price_path, "\"0\"", "an on-demand price must be greater than zero");
  return price;
}

}  // namespace pricing_detail

/// Reads a get-products output and keeps, per instance type, the product whose attributes are all of
/// kLinuxOnDemandAttributes (and whose regionCode, when given, is `region`), with the hourly USD price of its
/// OnDemand term. Products of other operating systems, tenancies, software or capacity status, other regions
/// and non-instance products are skipped (counted in other_products). Two chosen products of one type with
/// different prices, a chosen product without an hourly OnDemand price, or a price that is not a decimal
/// number greater than zero are errors: spotdnn::invalid_argument "function: SOURCE: PriceList[4].terms… = …: why".
[[nodiscard]] inline OnDemandPrices read_pricing_products(const Json& json, const std::string& source, const std::string& region,
                                                          const std::string& function = "read_pricing_products") {
  const AwsOutputReader in(source, function);
  using R = AwsOutputReader;
  in.object(json, "");
  const Json& list = in.array(in.required(json, "", "PriceList"), "PriceList");
  OnDemandPrices prices;
  prices.products = list.size();
  if (const Json* token = R::member(json, "NextToken")) prices.more_pages = !(token->is_string() && token->get_ref<const std::string&>().empty());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = R::index("PriceList", i);
    Json parsed;
    const Json* product = &list[i];
    if (list[i].is_string()) {
      const auto& text = list[i].get_ref<const std::string&>();
      if (text.size() > kMaxJsonFileBytes) {
        in.fail(path, std::to_string(text.size()) + " bytes", "a product's JSON text may have at most " + std::to_string(kMaxJsonFileBytes) + " bytes");
      }
      try {
        parsed = parse_json(text, in.where(path));
      } catch (const invalid_argument& e) {
        std::string message = e.what();
        const std::string prefix = "parse_json: ";
        if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
        throw invalid_argument(function + ": " + message);
      }
      product = &parsed;
    }
    in.object(*product, path);
    const std::string product_path = R::key(path, "product");
    const Json* description = R::member(*product, "product");
    if (description == nullptr) {
      ++prices.other_products;
      continue;
    }
    in.object(*description, product_path);
    const std::string attributes_path = R::key(product_path, "attributes");
    const Json& attributes = in.object(in.required(*description, product_path, "attributes"), attributes_path);
    const auto attribute = [&](std::string_view name) -> std::string {
      const Json* value = R::member(attributes, name);
      return value == nullptr ? std::string() : in.text(*value, R::key(attributes_path, name));
    };
    bool wanted = !attribute("instanceType").empty();
    for (const auto& [name, value] : kLinuxOnDemandAttributes) wanted = wanted && attribute(name) == value;
    if (R::member(attributes, "regionCode") != nullptr) wanted = wanted && attribute("regionCode") == region;
    if (!wanted) {
      ++prices.other_products;
      continue;
    }
    OnDemandPrice price;
    price.instance_type = attribute("instanceType");
    price.path = path;
    if (const Json* sku = R::member(*description, "sku")) price.sku = in.text(*sku, R::key(product_path, "sku"));
    price.price_usd_per_hour = pricing_detail::hourly_on_demand_usd(in, *product, path);
    const auto [it, fresh] = prices.by_type.emplace(price.instance_type, price);
    if (!fresh && it->second.price_usd_per_hour != price.price_usd_per_hour) {
      in.fail(path, spotdnn::detail::quoted(price.instance_type),
              "a second Linux/Shared/NA/Used on-demand product for this type with another price (the first is " + it->second.path + ")");
    }
  }
  return prices;
}

}  // namespace spotdnn::io::aws
