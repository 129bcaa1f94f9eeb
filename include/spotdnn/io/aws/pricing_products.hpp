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
/// "Reserved": {…}}, …}. Each entry is parsed (in linear time) with io::parse_json's limits (kMaxJsonFileBytes, kMaxJsonDepth,
/// no duplicate keys); an entry already given as an object is read as it is.
///
/// The Pricing API answers only in us-east-1, eu-central-1 and ap-south-1 (its endpoints), whatever region is
/// priced: call it there and select the priced region with a filter, e.g.
///   aws pricing get-products --region us-east-1 --service-code AmazonEC2 --filters
///     Type=TERM_MATCH,Field=regionCode,Value=eu-west-1 Type=TERM_MATCH,Field=operatingSystem,Value=Linux
///     Type=TERM_MATCH,Field=tenancy,Value=Shared Type=TERM_MATCH,Field=preInstalledSw,Value=NA
///     Type=TERM_MATCH,Field=capacitystatus,Value=Used Type=ANY_OF,Field=instanceType,Value=p3.2xlarge,g5.xlarge
/// The reader still checks every attribute, so an unfiltered output gives the same prices.
///
/// Also read (docs/market-data.md, "Forms read"): the PriceList entries decoded, one object
/// (`jq '.PriceList[0] | fromjson'`) or a list or stream of them (`jq '.PriceList[] | fromjson'`), and the
/// public EC2 offer file (the bulk Price List JSON of one region, `…/offers/v1.0/aws/AmazonEC2/current/REGION/index.json`,
/// "Reading the service price list file for an AWS service"): {"formatVersion": "v1.0", "offerCode": "AmazonEC2",
/// "products": {"SKU": {"sku": "SKU", "productFamily": "Compute Instance", "attributes": {…}}, …}, "terms":
/// {"OnDemand": {"SKU": {"SKU.TERM": {"priceDimensions": {"SKU.TERM.DIM": {"unit": "Hrs", "pricePerUnit":
/// {"USD": "3.0600000000"}}}}}}, "Reserved": {…}}}.

#include <cstddef>
#include <map>
#include <set>
#include <vector>
#include <string>
#include <string_view>
#include <utility>

#include "spotdnn/io/aws/aws_output.hpp"
#include "spotdnn/io/aws/output_forms.hpp"
#include "spotdnn/io/json.hpp"

namespace spotdnn::io::aws {

/// The product attributes (name, value) a Linux, shared-tenancy, no-software, ordinary on-demand price has.
/// A product whose regionCode attribute is given must also name the catalog's region, and one whose
/// marketoption attribute is given must say "OnDemand" (not a Capacity Block).
inline constexpr std::pair<std::string_view, std::string_view> kLinuxOnDemandAttributes[] = {
    {"operatingSystem", "Linux"}, {"tenancy", "Shared"}, {"preInstalledSw", "NA"}, {"capacitystatus", "Used"}};

/// The Linux on-demand price of one instance type.
struct OnDemandPrice {
  std::string instance_type;
  double price_usd_per_hour = 0;
  std::string sku;   ///< product.sku (the products key in an offer file), when given
  std::string path;  ///< e.g. "PriceList[4]", "[4]" or "products.SKU", for messages
};

/// What one get-products output (or offer file, or decoded PriceList entries) says.
struct OnDemandPrices {
  std::map<std::string, OnDemandPrice> by_type;
  std::size_t products = 0;          ///< products read (PriceList entries, offer-file products)
  std::size_t other_products = 0;    ///< products that are not a Linux/Shared/NA/Used instance of the region
  std::size_t zero_price_products = 0;  ///< chosen products priced $0 per hour (placeholders): skipped
  std::size_t without_on_demand_term = 0;  ///< chosen offer-file products without an OnDemand term: skipped
  bool more_pages = false;           ///< the output has a NextToken: later pages were not fetched
  std::string form;                  ///< "get-products", "products" (decoded entries), "offer file"
};

namespace pricing_detail {

/// The hourly USD price of an OnDemand term map {TERM: {"priceDimensions": {DIM: {"unit": "Hrs",
/// "pricePerUnit": {"USD": "…"}}}}} at `on_demand_path`: the one price dimension with unit "Hrs" (0 when AWS
/// writes $0). A price in another currency only (CNY) is refused naming it.
inline double hourly_on_demand_usd(const AwsOutputReader& in, const Json& on_demand, const std::string& on_demand_path) {
  using R = AwsOutputReader;
  in.object(on_demand, on_demand_path);
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
      if (R::member(per_unit, "USD") == nullptr && !per_unit.empty()) {
        const std::string currency = per_unit.begin().key().substr(0, 16);
        in.fail_at(per_unit_path, per_unit,
                   "priced in " + currency + ", not USD: spotdnn reads USD prices only (the price lists of the China regions are in CNY)");
      }
      const double usd = in.decimal_text(in.required(per_unit, per_unit_path, "USD"), usd_path, "USD per hour");
      if (price >= 0 && usd != price) {
        in.fail_at(usd_path, per_unit.at("USD"), "a second hourly on-demand price for the product (the first is at " + price_path + ")");
      }
      price = usd;
      price_path = usd_path;
    }
  }
  if (price < 0) in.fail_at(on_demand_path, on_demand, "no price dimension with unit \"Hrs\" in the OnDemand term");
  return price;
}

/// What a product's attributes say: whether it is a Linux/Shared/NA/Used on-demand instance of `region`.
struct Choice {
  bool wanted = false;
  std::string instance_type;
  std::string other_region;  ///< its regionCode, when it would be wanted but is of another region
};

inline Choice choose(const AwsOutputReader& in, const Json& attributes, const std::string& attributes_path, const std::string& region) {
  using R = AwsOutputReader;
  const auto attribute = [&](std::string_view name) -> std::string {
    const Json* value = R::member(attributes, name);
    return value == nullptr ? std::string() : in.text(*value, R::key(attributes_path, name));
  };
  Choice choice;
  choice.instance_type = attribute("instanceType");
  bool wanted = !choice.instance_type.empty();
  for (const auto& [name, value] : kLinuxOnDemandAttributes) wanted = wanted && attribute(name) == value;
  if (R::member(attributes, "marketoption") != nullptr) wanted = wanted && attribute("marketoption") == "OnDemand";
  if (wanted && R::member(attributes, "regionCode") != nullptr) {
    const std::string code = attribute("regionCode");
    if (code != region) {
      choice.other_region = code;
      wanted = false;
    }
  }
  choice.wanted = wanted;
  return choice;
}

/// Keeps a chosen product's price: a $0 price is skipped (counted), a second product of one type must
/// have the same price.
inline void keep(const AwsOutputReader& in, OnDemandPrices& prices, OnDemandPrice price) {
  if (!(price.price_usd_per_hour > 0)) {
    ++prices.zero_price_products;
    return;
  }
  const auto [it, fresh] = prices.by_type.emplace(price.instance_type, price);
  if (!fresh && it->second.price_usd_per_hour != price.price_usd_per_hour) {
    in.fail(price.path, spotdnn::detail::quoted(price.instance_type),
            "a second Linux/Shared/NA/Used on-demand product for this type with another price (the first is " + it->second.path + ")");
  }
}

/// Refuses prices of another region only: nothing chosen, but products that would be are of other regions.
inline void require_region(const AwsOutputReader& in, const OnDemandPrices& prices, const std::set<std::string>& other_regions,
                           const std::string& region) {
  if (!prices.by_type.empty() || other_regions.empty()) return;
  std::string found;
  for (const std::string& code : other_regions) found += (found.empty() ? "" : ", ") + code;
  in.fail("", "regionCode " + found,
          "the on-demand prices are of " + found + ", not of " + region + " (--region): give the offer file or get-products output of " + region);
}

/// The offer file (see the file comment).
inline OnDemandPrices read_offer_file(const AwsOutputReader& in, const Json& json, const std::string& region) {
  using R = AwsOutputReader;
  OnDemandPrices prices;
  prices.form = "offer file";
  if (const Json* code = R::member(json, "offerCode")) {
    const std::string offer = in.text(*code, "offerCode");
    if (offer != "AmazonEC2") {
      in.fail("offerCode", spotdnn::detail::quoted(offer),
              "the offer file of another service: on-demand instance prices are in the AmazonEC2 offer file");
    }
  }
  const Json& products = in.object(in.required(json, "", "products"), "products");
  if (products.size() > kMaxAwsRows) in.fail("products", std::to_string(products.size()) + " products", "at most " + std::to_string(kMaxAwsRows) + " products are read");
  const Json& terms = in.object(in.required(json, "", "terms"), "terms");
  const Json& on_demand = in.object(in.required(terms, "terms", "OnDemand"), "terms.OnDemand");
  if (on_demand.size() > kMaxAwsRows) in.fail("terms.OnDemand", std::to_string(on_demand.size()) + " SKUs", "at most " + std::to_string(kMaxAwsRows) + " SKUs are read");
  // An index of the OnDemand terms by SKU: the JSON object's own lookup is linear.
  std::map<std::string_view, const Json*> terms_by_sku;
  for (auto it = on_demand.begin(); it != on_demand.end(); ++it) terms_by_sku.emplace(it.key(), &it.value());
  std::set<std::string> other_regions;
  prices.products = products.size();
  for (auto it = products.begin(); it != products.end(); ++it) {
    const std::string path = R::key("products", it.key());
    const Json& product = in.object(it.value(), path);
    const Json* attributes = R::member(product, "attributes");
    if (attributes == nullptr) {
      ++prices.other_products;
      continue;
    }
    const std::string attributes_path = R::key(path, "attributes");
    in.object(*attributes, attributes_path);
    const Choice choice = choose(in, *attributes, attributes_path, region);
    if (!choice.wanted) {
      if (!choice.other_region.empty()) other_regions.insert(choice.other_region);
      ++prices.other_products;
      continue;
    }
    const auto term = terms_by_sku.find(it.key());
    if (term == terms_by_sku.end() || term->second->is_null()) {
      ++prices.without_on_demand_term;
      continue;
    }
    OnDemandPrice price;
    price.instance_type = choice.instance_type;
    price.sku = it.key();
    price.path = path;
    price.price_usd_per_hour = hourly_on_demand_usd(in, *term->second, R::key("terms.OnDemand", it.key()));
    keep(in, prices, std::move(price));
  }
  require_region(in, prices, other_regions, region);
  return prices;
}

}  // namespace pricing_detail

/// Reads on-demand prices and keeps, per instance type, the product whose attributes are all of
/// kLinuxOnDemandAttributes (whose regionCode, when given, is `region`, and marketoption, when given,
/// "OnDemand"), with the hourly USD price of its OnDemand term. The input is a get-products output, the
/// PriceList entries decoded (one object, or a list or stream of them), or the region's EC2 offer file.
/// Products of other operating systems, tenancies, software, capacity status or market option, other
/// regions and non-instance products are skipped (counted in other_products); a chosen product priced $0
/// (a placeholder) is skipped (zero_price_products). Errors throw spotdnn::invalid_argument
/// "function: SOURCE: PriceList[4].terms… = …: why": two chosen products of one type with different prices,
/// a chosen get-products product without an hourly OnDemand price, a price that is not a decimal number or
/// only in another currency than USD, an offer file of another service, and prices of another region only
/// (naming both regions); a document of none of these forms says what it looks like.
[[nodiscard]] inline OnDemandPrices read_pricing_products(const Json& json, const std::string& source, const std::string& region,
                                                          const std::string& function = "read_pricing_products") {
  const AwsOutputReader in(source, function);
  using R = AwsOutputReader;
  if (json.is_object() && (json.contains("offerCode") || (json.contains("products") && json.contains("terms")))) {
    return pricing_detail::read_offer_file(in, json, region);
  }
  // The entries: (entry, path).
  std::vector<std::pair<const Json*, std::string>> entries;
  OnDemandPrices prices;
  if (json.is_object() && json.contains("product") && !json.contains("PriceList")) {
    prices.form = "products";
    entries.emplace_back(&json, "");
  } else {
    const AwsOutputList found = find_output_list(in, json, kPricingProductsOutput);
    prices.form = found.output != nullptr ? "get-products" : "products";
    if (const Json* token = found.output != nullptr ? R::member(*found.output, "NextToken") : nullptr) {
      prices.more_pages = !(token->is_string() && token->get_ref<const std::string&>().empty());
    }
    for (std::size_t i = 0; i < found.list->size(); ++i) entries.emplace_back(&(*found.list)[i], R::index(found.path, i));
  }
  prices.products = entries.size();
  std::set<std::string> other_regions;
  for (const auto& [entry, path] : entries) {
    Json parsed;
    const Json* product = entry;
    if (entry->is_string()) {
      const auto& text = entry->get_ref<const std::string&>();
      if (text.size() > kMaxJsonFileBytes) {
        in.fail(path, std::to_string(text.size()) + " bytes", "a product's JSON text may have at most " + std::to_string(kMaxJsonFileBytes) + " bytes");
      }
      try {
        parsed = forms_detail::parse_at(text, 0, false, in.where(path));  // parse_json's limits, in linear time
      } catch (const invalid_argument& e) {
        std::string message = e.what();
        const std::string prefix = "parse_aws_output: ";
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
    const pricing_detail::Choice choice = pricing_detail::choose(in, attributes, attributes_path, region);
    if (!choice.wanted) {
      if (!choice.other_region.empty()) other_regions.insert(choice.other_region);
      ++prices.other_products;
      continue;
    }
    OnDemandPrice price;
    price.instance_type = choice.instance_type;
    price.path = path.empty() ? std::string("product") : path;
    if (const Json* sku = R::member(*description, "sku")) price.sku = in.text(*sku, R::key(product_path, "sku"));
    const std::string terms_path = R::key(path, "terms");
    const Json& terms = in.object(in.required(*product, path, "terms"), terms_path);
    const std::string on_demand_path = R::key(terms_path, "OnDemand");
    price.price_usd_per_hour = pricing_detail::hourly_on_demand_usd(in, in.required(terms, terms_path, "OnDemand"), on_demand_path);
    pricing_detail::keep(in, prices, std::move(price));
  }
  pricing_detail::require_region(in, prices, other_regions, region);
  return prices;
}

}  // namespace spotdnn::io::aws
